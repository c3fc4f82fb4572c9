package jmespath

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
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
