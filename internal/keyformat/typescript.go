package keyformat

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The TypeScript key hashes what Powertools for AWS Lambda
// (TypeScript) hashes: JSON.stringify(deepSort(value)) of the value its
// JMESPath search returns on the event as JSON.parse decoded it
// (BasePersistenceLayer.getHashedIdempotencyKey). textWriter.typeScript
// writes that text from the value our search returns on the raw event,
// byte for byte:
//
//   - Every number is a double: 1.0 and 1e0 are 1, -0 is 0. A double is
//     written as Number::toString writes it: the shortest digits that read
//     back the same double, with an exponent below 1e-6 and from 1e21 on.
//     A number that the double does not hold exactly, such as an integer
//     past 2^53 that it rounds (9007199254740993 reads as
//     9007199254740992) or one beyond its range (null), is refused with an
//     *InexactError: see exactDouble.
//   - Strings keep their characters as UTF-8; only \" \\ \b \f \n \r \t
//     and the other control characters (\u00xx, lowercase) are escaped.
//   - deepSort orders an object's members by their names' toLowerCase(),
//     compared as UTF-16 code units. Its comparator never answers "equal",
//     so two names with the same lowercase form come out in an order that
//     depends on the sort's steps: such a value is refused. Then, as for
//     every JavaScript object, names that are array indexes ("0" to
//     "4294967294", as written by String(n)) come first, in numeric order.
//     A member named __proto__ is refused: deepSort's assignment of it
//     sets the new object's prototype instead of making a member, so that
//     it would be left out of the text, and requests that differ in it
//     would share a hash.
//   - A float64 that is not finite, as sum and avg can reach, is refused:
//     JSON.stringify writes null for all of them.

// errTypeScriptOrder reports an object that Powertools TypeScript cannot
// key deterministically.
var errTypeScriptOrder = errors.New("two member names with the same lowercase form, which Powertools TypeScript orders unpredictably")

// errTypeScriptProto reports a member that Powertools TypeScript leaves
// out of the text it hashes.
var errTypeScriptProto = errors.New("a member named __proto__, which Powertools TypeScript leaves out of the hash")

// typeScript writes v as JSON.stringify(deepSort(v)) writes the value
// JSON.parse gives for it. v is made of what encoding/json decodes with
// UseNumber.
func (t *textWriter) typeScript(v any) error {
	switch v := v.(type) {
	case nil:
		t.buf = append(t.buf, "null"...)
	case bool:
		t.buf = strconv.AppendBool(t.buf, v)
	case string:
		return t.typeScriptString(v)
	case json.Number:
		// Every number is a double in JavaScript, integers too.
		f, ok := exactDouble(string(v))
		if !ok {
			return &InexactError{Mode: TypeScript, Path: "@", Number: string(v)}
		}
		t.buf = appendTypeScriptNumber(t.buf, f)
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return &InexactError{Mode: TypeScript, Path: "@", Number: strconv.FormatFloat(v, 'g', -1, 64)}
		}
		t.buf = appendTypeScriptNumber(t.buf, v)
	case []any:
		t.buf = append(t.buf, '[')
		for i, e := range v {
			if i > 0 {
				t.buf = append(t.buf, ',')
			}
			if err := t.typeScript(e); err != nil {
				return atIndex(err, i)
			}
			t.spill()
		}
		t.buf = append(t.buf, ']')
	case map[string]any:
		names, err := typeScriptOrder(v)
		if err != nil {
			return err
		}
		t.buf = append(t.buf, '{')
		for i, name := range names {
			if i > 0 {
				t.buf = append(t.buf, ',')
			}
			if err := t.typeScriptString(name); err != nil {
				return atMember(err, name)
			}
			t.buf = append(t.buf, ':')
			if err := t.typeScript(v[name]); err != nil {
				return atMember(err, name)
			}
			t.spill()
		}
		t.buf = append(t.buf, '}')
	default:
		return fmt.Errorf("idempotency: cannot write %T as JSON.stringify", v)
	}
	return nil
}

// typeScriptOrder returns the names of obj in the order in which
// JSON.stringify(deepSort(obj)) writes them.
func typeScriptOrder(obj map[string]any) ([]string, error) {
	type member struct {
		name  string
		lower []uint16 // toLowerCase(name), in UTF-16
		index int64    // the array index the name is, or -1
	}
	members := make([]member, 0, len(obj))
	for name := range obj {
		if name == "__proto__" {
			return nil, errTypeScriptProto
		}
		members = append(members, member{name, jsLowerUTF16(name), arrayIndex(name)})
	}
	slices.SortFunc(members, func(a, b member) int {
		switch {
		case a.index >= 0 && b.index >= 0:
			return cmp.Compare(a.index, b.index)
		case a.index >= 0:
			return -1
		case b.index >= 0:
			return 1
		}
		return slices.Compare(a.lower, b.lower)
	})
	names := make([]string, len(members))
	for i, m := range members {
		if i > 0 && m.index < 0 && slices.Equal(m.lower, members[i-1].lower) {
			return nil, errTypeScriptOrder
		}
		names[i] = m.name
	}
	return names, nil
}

// arrayIndex returns the array index that name is, or -1: a canonical
// numeric string of an integer from 0 to 2^32-2, which JavaScript lists
// before an object's other property names.
func arrayIndex(name string) int64 {
	if name == "" || len(name) > 10 || (name[0] == '0' && name != "0") {
		return -1
	}
	n, err := strconv.ParseUint(name, 10, 64)
	if err != nil || n > math.MaxUint32-1 {
		return -1
	}
	return int64(n)
}

// jsLowerUTF16 is String.prototype.toLowerCase of s, in UTF-16: each
// character's lowercase mapping, but for the two that Unicode's
// SpecialCasing gives another (without a language): U+0130 (İ) becomes
// "i\u0307", and Σ becomes a final ς where it ends a word (the
// Final_Sigma condition). It allocates the result alone, two bytes for
// each byte of s at most.
func jsLowerUTF16(s string) []uint16 {
	out := make([]uint16, 0, len(s))
	for i, r := range s {
		switch {
		case r == 'İ':
			out = append(out, 'i', 0x307)
		case r == 'Σ' && finalSigma(s, i):
			out = append(out, 'ς')
		default:
			out = utf16.AppendRune(out, unicode.ToLower(r))
		}
	}
	return out
}

// finalSigma reports whether the rune at s[i] is preceded by a cased
// letter and then only case-ignorable characters, and is not followed by
// case-ignorable characters and then a cased letter (Unicode, Table 3-17).
func finalSigma(s string, i int) bool {
	before := s[:i]
	for {
		r, n := utf8.DecodeLastRuneInString(before)
		if n == 0 || !caseIgnorable(r) {
			if n == 0 || !cased(r) {
				return false
			}
			break
		}
		before = before[:len(before)-n]
	}
	_, n := utf8.DecodeRuneInString(s[i:])
	for after := s[i+n:]; ; {
		r, n := utf8.DecodeRuneInString(after)
		if n == 0 {
			return true
		}
		if !caseIgnorable(r) {
			return !cased(r)
		}
		after = after[n:]
	}
}

// cased is Unicode's Cased property.
func cased(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable is Unicode's Case_Ignorable property: the categories Mn,
// Me, Cf, Lm and Sk, and the characters whose Word_Break is MidLetter,
// MidNumLet or Single_Quote.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', 0xb7, 0x387, 0x55f, 0x5f4, 0x2018, 0x2019, 0x2024, 0x2027,
		0xfe13, 0xfe52, 0xfe55, 0xff07, 0xff0e, 0xff1a:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// appendTypeScriptNumber writes f as JSON.stringify does: NaN and the
// infinities as null, others as Number::toString (ECMA-262, 6.1.6.1.20).
func appendTypeScriptNumber(dst []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(dst, "null"...)
	}
	if f == 0 {
		return append(dst, '0') // -0 too
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	digits, n := shortestDigits(f)
	k := len(digits)
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		return append(dst, strings.Repeat("0", n-k)...)
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		return append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, "0."...)
		dst = append(dst, strings.Repeat("0", -n)...)
		return append(dst, digits...)
	}
	dst = append(dst, digits[0])
	if k > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'e')
	if n-1 < 0 {
		dst = append(dst, '-')
		return strconv.AppendInt(dst, int64(1-n), 10)
	}
	dst = append(dst, '+')
	return strconv.AppendInt(dst, int64(n-1), 10)
}

// typeScriptString writes s as JSON.stringify does.
func (t *textWriter) typeScriptString(s string) error { return t.quote(s, appendTypeScriptChars) }

// appendTypeScriptString appends s as JSON.stringify writes it.
func appendTypeScriptString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	return append(appendTypeScriptChars(dst, s), '"')
}

// appendTypeScriptChars appends the characters of s as JSON.stringify
// writes them inside a string.
func appendTypeScriptChars(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	for _, r := range s {
		switch c := shortEscape(r); {
		case c != 0:
			dst = append(dst, '\\', c)
		case r < ' ':
			dst = append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}
