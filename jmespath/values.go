package jmespath

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// The data model is what encoding/json decodes into an any: nil, bool,
// float64, json.Number, string, []any and map[string]any.

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case *ExpRef:
		return "expref"
	}
	return fmt.Sprintf("%T", v)
}

func isNumber(v any) bool {
	switch v.(type) {
	case float64, json.Number:
		return true
	}
	return false
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// truthy follows the specification: false, null, "" and empty arrays and
// objects are false; every number, including 0, is true.
func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}

// equal is deep JSON equality; numbers compare by value.
func equal(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		bb, ok := b.(bool)
		return ok && a == bb
	case string:
		bs, ok := b.(string)
		return ok && a == bs
	case float64, json.Number:
		c, ok := compareNumbers(a, b)
		return ok && c == 0
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !equal(a[i], bl[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !equal(av, bv) {
				return false
			}
		}
		return true
	}
	return false
}

// compareNumbers orders two numbers; ok is false unless both are numbers.
// Integers written as json.Number compare exactly at any size; other
// numbers compare as float64.
func compareNumbers(a, b any) (c int, ok bool) {
	switch a := a.(type) {
	case float64:
		switch b := b.(type) {
		case float64:
			return cmpFloat(a, b), true
		case json.Number:
			c, ok := compareNumbers(b, a)
			return -c, ok
		}
	case json.Number:
		switch b := b.(type) {
		case json.Number:
			if isIntText(string(a)) && isIntText(string(b)) {
				return cmpIntText(string(a), string(b)), true
			}
			return cmpFloat(numberFloat(a), numberFloat(b)), true
		case float64:
			if isIntText(string(a)) && b == math.Trunc(b) && !math.IsInf(b, 0) {
				if i, err := strconv.ParseInt(string(a), 10, 64); err == nil && math.Abs(b) < 1<<63 {
					return cmpInt(i, int64(b)), true
				}
				ai, _ := new(big.Int).SetString(string(a), 10)
				return new(big.Float).SetInt(ai).Cmp(big.NewFloat(b)), true
			}
			return cmpFloat(numberFloat(a), b), true
		}
	}
	return 0, false
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// isIntText reports whether s is an optionally signed run of digits.
func isIntText(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// cmpIntText compares two integer texts of any length by value.
func cmpIntText(a, b string) int {
	an, bn := strings.HasPrefix(a, "-"), strings.HasPrefix(b, "-")
	a, b = strings.TrimLeft(strings.TrimPrefix(a, "-"), "0"), strings.TrimLeft(strings.TrimPrefix(b, "-"), "0")
	if a == "" {
		an = false // -0 is 0
	}
	if b == "" {
		bn = false
	}
	if an != bn {
		if an {
			return -1
		}
		return 1
	}
	c := len(a) - len(b)
	if c == 0 {
		c = strings.Compare(a, b)
	}
	if c < 0 {
		c = -1
	} else if c > 0 {
		c = 1
	}
	if an {
		return -c
	}
	return c
}

// numberFloat converts a json.Number, saturating to ±Inf out of range.
func numberFloat(n json.Number) float64 {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !math.IsInf(f, 0) {
		return math.NaN()
	}
	return f
}

// toFloat converts a number for arithmetic.
func toFloat(v any) float64 {
	switch v := v.(type) {
	case float64:
		return v
	case json.Number:
		return numberFloat(v)
	}
	return math.NaN()
}
