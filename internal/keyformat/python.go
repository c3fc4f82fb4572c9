package keyformat

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The Python key hashes what Powertools for AWS Lambda (Python)
// hashes: json.dumps(value, sort_keys=True) of the value its JMESPath search
// returns on the event as json.loads decoded it (persistence/base.py,
// _generate_hash). textWriter.python writes that text from the value our
// search returns on the raw event, byte for byte:
//
//   - json.loads makes a number with a fraction or an exponent a float,
//     any other an int: 1.0 stays 1.0, 1e2 becomes 100.0, and -0 becomes 0.
//     An int is written with all its digits; a float as repr writes it
//     (the shortest text that reads back the same double: 1e+16, 1e-05,
//     0.0001). A float that the double does not hold exactly
//     (100.00000000000000001 reads as 100.0, 1e400 as Infinity) is refused
//     with an *InexactError: see exactDouble.
//   - Strings are escaped as ensure_ascii does: \" \\ \n \r \t \b \f, any
//     other character outside ' '..'~' as \u followed by four lowercase hex
//     digits, a surrogate pair above U+FFFF.
//   - Object members are sorted by code point, which is the order of their
//     UTF-8 bytes; ", " separates items and ": " a name from its value.
//   - A float64 that is not finite, as sum and avg can reach, is refused:
//     json.dumps writes Infinity for every one that overflows.

// pythonMaxIntDigits is Python's limit on the digits of an int read from
// text (sys.int_info.default_max_str_digits, since 3.11 and in the
// security releases of 3.7 to 3.10): json.loads refuses an event with a
// longer integer, so the Python function could not have keyed it either.
const pythonMaxIntDigits = 4300

// python writes v as Python's json.dumps(v, sort_keys=True) writes the
// value json.loads gives for it. v is made of what encoding/json decodes
// with UseNumber; a float64 (the result of a JMESPath function such as
// avg) is written as a Python float, and refused when it is not finite,
// as infinities that sum or avg reach would share a hash.
func (t *textWriter) python(v any) error {
	var err error
	switch v := v.(type) {
	case nil:
		t.buf = append(t.buf, "null"...)
	case bool:
		t.buf = strconv.AppendBool(t.buf, v)
	case string:
		return t.pythonString(v)
	case json.Number:
		t.buf, err = appendPythonNumber(t.buf, string(v))
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return &InexactError{Mode: Python, Path: "@", Number: strconv.FormatFloat(v, 'g', -1, 64)}
		}
		t.buf = appendPythonFloat(t.buf, v)
	case []any:
		t.buf = append(t.buf, '[')
		for i, e := range v {
			if i > 0 {
				t.buf = append(t.buf, ", "...)
			}
			if err := t.python(e); err != nil {
				return atIndex(err, i)
			}
			t.spill()
		}
		t.buf = append(t.buf, ']')
	case map[string]any:
		t.buf = append(t.buf, '{')
		for i, name := range sortedNames(v) {
			if i > 0 {
				t.buf = append(t.buf, ", "...)
			}
			if err := t.pythonString(name); err != nil {
				return atMember(err, name)
			}
			t.buf = append(t.buf, ": "...)
			if err := t.python(v[name]); err != nil {
				return atMember(err, name)
			}
			t.spill()
		}
		t.buf = append(t.buf, '}')
	default:
		return fmt.Errorf("idempotency: cannot write %T as Python's json.dumps", v)
	}
	return err
}

// appendPythonNumber writes a JSON number as json.loads reads it and
// json.dumps writes it back, or refuses a float that Python does not read
// exactly (see exactDouble).
func appendPythonNumber(dst []byte, text string) ([]byte, error) {
	if strings.ContainsAny(text, ".eE") {
		f, ok := exactDouble(text)
		if !ok {
			return nil, &InexactError{Mode: Python, Path: "@", Number: text}
		}
		return appendPythonFloat(dst, f), nil
	}
	digits := strings.TrimPrefix(text, "-")
	if len(digits) > pythonMaxIntDigits {
		return nil, fmt.Errorf("idempotency: an integer of %d digits, more than Python's json.loads reads (%d)", len(digits), pythonMaxIntDigits)
	}
	if digits == "0" {
		return append(dst, '0'), nil // -0 is the int 0
	}
	return append(dst, text...), nil
}

// appendPythonFloat writes f as Python's float.__repr__ does, with
// json.dumps's spelling of the infinities.
func appendPythonFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	}
	if math.Signbit(f) {
		dst = append(dst, '-')
		f = -f
	}
	if f == 0 {
		return append(dst, "0.0"...)
	}
	digits, point := shortestDigits(f)
	// repr uses the exponent form when the decimal point would be more
	// than 16 places right of the first digit, or 4 or more left of it
	// (Python's format_float_short, mode 'r').
	if point <= -4 || point > 16 {
		dst = append(dst, digits[0])
		if len(digits) > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		exp := point - 1
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	switch {
	case point <= 0:
		dst = append(dst, "0."...)
		dst = append(dst, strings.Repeat("0", -point)...)
		return append(dst, digits...)
	case point >= len(digits):
		dst = append(dst, digits...)
		dst = append(dst, strings.Repeat("0", point-len(digits))...)
		return append(dst, ".0"...)
	}
	dst = append(dst, digits[:point]...)
	dst = append(dst, '.')
	return append(dst, digits[point:]...)
}

// shortestDigits returns the shortest decimal digits that read back as f,
// a positive finite double, and the position of the decimal point
// relative to them: f = 0.digits × 10^point. Python's repr and
// JavaScript's Number::toString both start from these digits (the
// shortest, and of those the closest to f).
func shortestDigits(f float64) (digits string, point int) {
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±xx
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	return strings.Replace(mant, ".", "", 1), e + 1
}

// exactDouble returns the double that Python's float() and JavaScript's
// JSON.parse read from text, a JSON number (as encoding/json and the
// jmespath functions write one), and reports whether that
// double stands for text's own value: whether the shortest decimal that
// reads back as it (the digits that repr and Number::toString write,
// strconv.FormatFloat(f, 'g', -1, 64)) is numerically text, and the double
// is finite. Only then does the text a compatibility mode hashes tell the
// number apart from every other: two numbers it accepts hash alike only
// when they are equal (1.0 and 1e0, 0 and -0.0), while 100.00000000000000001
// and 100.0, 0.1000000000000000055511151231257827 and 0.1, 1e400 and 2e400
// (both infinite), 1e-400 and 0, or 9007199254740993 and 9007199254740992
// (a double between 2^53 and 2^54 is even) would hash alike in Powertools
// and be two requests to a Go handler that reads numbers exactly. The rule
// accepts every decimal of at most 15 significant digits between the
// smallest normal double and the largest, every integer within ±2^53, and
// whatever strconv and encoding/json write for a float64, subnormals
// included (5e-324); it refuses a subnormal written with more digits than
// its double holds (1.23456789012345e-320 reads as 1.2347e-320).
//
// Digits are compared as decimals, never as doubles or text: the text's
// significant digits and decimal point against the shortest ones, so an
// exponent of any size costs nothing and 1e2, 100 and 100.0 are equal.
func exactDouble(text string) (float64, bool) {
	f, err := strconv.ParseFloat(text, 64) // ±Inf out of range, with ErrRange
	if (err != nil && !errors.Is(err, strconv.ErrRange)) || math.IsInf(f, 0) {
		return f, false
	}
	digits, point, ok := Digits(text)
	if !ok || f == 0 {
		return f, ok && digits == "" // 0, -0.0 and 0e5, but not 1e-400
	}
	want, wantPoint := shortestDigits(math.Abs(f))
	return f, digits == want && point == wantPoint
}

// Digits returns the significant digits of a JSON number, without
// leading or trailing zeros ("" for zero), and the position of the
// decimal point relative to them, as shortestDigits does: text's value is
// ±0.digits × 10^point. It reports false for an exponent too large for any
// double, whose value could not be read back exactly anyway. It is the one
// reading of a number's text into digits, for the stores' limits too.
func Digits(text string) (digits string, point int, ok bool) {
	mant, exp, hasExp := strings.Cut(strings.TrimPrefix(text, "-"), "e")
	if !hasExp {
		mant, exp, hasExp = strings.Cut(mant, "E")
	}
	whole, frac, _ := strings.Cut(mant, ".")
	all := whole + frac
	digits = strings.TrimLeft(all, "0")
	point = len(whole) - (len(all) - len(digits)) // each leading zero moves the point left
	if digits = strings.TrimRight(digits, "0"); digits == "" {
		return "", 0, true
	}
	if hasExp {
		e, err := strconv.Atoi(exp)
		if err != nil || e > 1<<30 || e < -1<<30 {
			return "", 0, false
		}
		point += e
	}
	return digits, point, true
}

// pythonString writes s as json.dumps does with ensure_ascii.
func (t *textWriter) pythonString(s string) error { return t.quote(s, appendPythonChars) }

// appendPythonChars appends the characters of s, which is UTF-8, as
// json.dumps with ensure_ascii writes them inside a string.
func appendPythonChars(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	escape := func(dst []byte, u rune) []byte {
		return append(dst, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
	}
	for _, r := range s {
		if c := shortEscape(r); c != 0 {
			dst = append(dst, '\\', c)
			continue
		}
		switch {
		case r >= ' ' && r <= '~':
			dst = append(dst, byte(r))
		case r > 0xffff:
			r -= 0x10000
			dst = escape(dst, 0xd800+(r>>10))
			dst = escape(dst, 0xdc00+(r&0x3ff))
		default:
			dst = escape(dst, r)
		}
	}
	return dst
}

// shortEscape is the letter of the two-character escape that JSON.stringify
// and Python's json.dumps both write for r, or 0 when they write none.
func shortEscape(r rune) byte {
	switch r {
	case '"', '\\':
		return byte(r)
	case '\n':
		return 'n'
	case '\r':
		return 'r'
	case '\t':
		return 't'
	case '\b':
		return 'b'
	case '\f':
		return 'f'
	}
	return 0
}
