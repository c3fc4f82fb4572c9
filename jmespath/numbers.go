package jmespath

import (
	"cmp"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// compareNumbers orders two numbers by their exact decimal value; ok is
// false unless both are numbers. A float64 counts as the shortest decimal
// that encoding/json would write for it, so 0.1 equals json.Number("0.1").
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
			x, xerr := strconv.ParseInt(string(a), 10, 64)
			y, yerr := strconv.ParseInt(string(b), 10, 64)
			if xerr == nil && yerr == nil {
				return cmpInt(x, y), true
			}
			return cmpNumberText(string(a), string(b)), true
		case float64:
			if math.IsNaN(b) || math.IsInf(b, 0) {
				return cmpFloat(numberFloat(a), b), true
			}
			if len(a) <= 15 && !strings.ContainsAny(string(a), "eE") {
				// At most 15 significant digits round-trip through
				// float64, so comparing as floats gives the same answer.
				return cmpFloat(numberFloat(a), b), true
			}
			return cmpNumberText(string(a), strconv.FormatFloat(b, 'e', -1, 64)), true
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

// decimal is a number's text read as ±0.d1d2d3... × 10^exp, with the
// digits d taken from intPart+frac, without leading or trailing zeros.
type decimal struct {
	neg         bool
	intPart     string
	frac        string
	first, last int // the significant digits are positions [first, last)
	exp         int64
}

func (d *decimal) zero() bool { return d.first == d.last }

func (d *decimal) digit(k int) byte {
	j := d.first + k
	if j < len(d.intPart) {
		return d.intPart[j]
	}
	return d.frac[j-len(d.intPart)]
}

// parseDecimal reads JSON number text. ok is false for anything else.
func parseDecimal(s string) (d decimal, ok bool) {
	if strings.HasPrefix(s, "-") {
		d.neg, s = true, s[1:]
	}
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == 0 {
		return d, false
	}
	d.intPart, s = s[:i], s[i:]
	if strings.HasPrefix(s, ".") {
		i = 1
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == 1 {
			return d, false
		}
		d.frac, s = s[1:i], s[i:]
	}
	var exp int64
	if s != "" {
		if s[0] != 'e' && s[0] != 'E' {
			return d, false
		}
		e, err := strconv.ParseInt(strings.TrimPrefix(s[1:], "+"), 10, 64)
		if err != nil {
			ne, ok := err.(*strconv.NumError)
			if !ok || ne.Err != strconv.ErrRange {
				return d, false
			}
			// Saturate: an exponent this large outweighs any digit count.
			e = math.MaxInt64 / 2
			if strings.HasPrefix(s[1:], "-") {
				e = -e
			}
		}
		exp = e
	}
	n := len(d.intPart) + len(d.frac)
	d.last = n
	for d.first < n && d.digitAt(d.first) == '0' {
		d.first++
	}
	for d.last > d.first && d.digitAt(d.last-1) == '0' {
		d.last--
	}
	d.exp = exp + int64(len(d.intPart)) - int64(d.first)
	return d, true
}

func (d *decimal) digitAt(j int) byte {
	if j < len(d.intPart) {
		return d.intPart[j]
	}
	return d.frac[j-len(d.intPart)]
}

// cmpNumberText compares two JSON number texts exactly.
func cmpNumberText(a, b string) int {
	x, xok := parseDecimal(a)
	y, yok := parseDecimal(b)
	if !xok || !yok {
		return cmpFloat(numberFloat(json.Number(a)), numberFloat(json.Number(b)))
	}
	if x.zero() || y.zero() {
		switch {
		case x.zero() && y.zero():
			return 0
		case x.zero():
			return -sign(y.neg)
		}
		return sign(x.neg)
	}
	if x.neg != y.neg {
		return sign(x.neg)
	}
	c := cmpMagnitude(&x, &y)
	if x.neg {
		return -c
	}
	return c
}

// sign is -1 for a negative number, 1 for a positive one.
func sign(neg bool) int {
	if neg {
		return -1
	}
	return 1
}

func cmpMagnitude(x, y *decimal) int {
	if x.exp != y.exp {
		if x.exp < y.exp {
			return -1
		}
		return 1
	}
	nx, ny := x.last-x.first, y.last-y.first
	for k := 0; k < nx && k < ny; k++ {
		if dx, dy := x.digit(k), y.digit(k); dx != dy {
			if dx < dy {
				return -1
			}
			return 1
		}
	}
	return cmp.Compare(nx, ny)
}

// isIntText reports whether s is an optionally negative run of digits.
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
