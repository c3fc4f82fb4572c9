package idempotency

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The key and the payload hash are SHA-256 digests of a canonical JSON
// encoding of the selected value, so that two events that differ only in
// object key order or whitespace share a key. Canonical here means: object
// keys sorted by their UTF-8 bytes, at every depth; no insignificant
// whitespace; strings escaped as encoding/json escapes them but without HTML
// escaping; numbers kept as written (json.Number), so 1 and 1.0 are different
// keys, as they are different text in the event.

// missing reports whether v counts as no key at all: null, "", [], {}, or
// an array holding a null. 0 and false are keys: a caller may well number
// its requests from zero. An array is what a multi-select key such as
// [customer_id, order_id] gives; with one of its paths absent, the others
// alone would key the event, and a customer's second order would get the
// first one's response.
func missing(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0 || slices.Contains(v, nil)
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// digest returns the SHA-256 digest of v's canonical JSON. A key is
// usually a short value, so its canonical text is built in a buffer on the
// stack; a longer one grows onto the heap.
func digest(v any) ([sha256.Size]byte, error) {
	var buf [256]byte
	b, err := appendCanonical(buf[:0], v)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(b), nil
}

// hashValue returns the hex SHA-256 of v's canonical JSON: the payload hash.
func hashValue(v any) (string, error) {
	sum, err := digest(v)
	if err != nil {
		return "", err
	}
	var h [2 * sha256.Size]byte
	encodeHex(h[:], sum[:])
	return string(h[:]), nil
}

// keyFor returns prefix + "#" + hashValue(v), built in one allocation.
func keyFor(prefix string, v any) (string, error) {
	sum, err := digest(v)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	sb.Grow(len(prefix) + 1 + 2*len(sum))
	sb.WriteString(prefix)
	sb.WriteByte('#')
	var h [2 * sha256.Size]byte
	encodeHex(h[:], sum[:])
	sb.Write(h[:])
	return sb.String(), nil
}

// decodeJSON decodes raw JSON keeping numbers as written, for hashing a
// whole document.
func decodeJSON(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("idempotency: trailing data after the JSON value")
	}
	return v, nil
}

// appendCanonical appends v's canonical JSON to b. v is what encoding/json
// (with UseNumber) or jmespath produces; any other Go value is taken through
// encoding/json first, so a value hashes the same whichever way it arrived.
func appendCanonical(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		return appendString(b, v), nil
	case json.Number:
		if !isNumber(v) {
			return b, fmt.Errorf("idempotency: invalid number %q", string(v))
		}
		return append(b, v...), nil
	case float64:
		return appendFloat(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendCanonical(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendCanonical(b, v[k]); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	generic, err := decodeJSON(raw)
	if err != nil {
		return b, err
	}
	return appendCanonical(b, generic)
}

// isNumber reports whether n is a JSON number, such as a json.Number
// decoded from a document always is; a json.Number built by hand might not
// be, and would make the canonical text ambiguous.
func isNumber(n json.Number) bool {
	return n != "" && (n[0] == '-' || n[0] >= '0' && n[0] <= '9') && json.Valid([]byte(n))
}

// appendFloat writes f as encoding/json does, so that a number computed by
// a JMESPath function hashes like the same number written by Marshal.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("idempotency: unsupported number %v", f)
	}
	raw, err := json.Marshal(f)
	if err != nil {
		return b, err
	}
	return append(b, raw...), nil
}

const hexDigits = "0123456789abcdef"

// plainPrefix returns the length of the longest prefix of s, in whole
// words of eight bytes, with no byte that appendString would escape or
// check: a control byte, '"', '\\', or a byte >= 0x80. An idempotency key
// is usually all such bytes, and is crossed a word at a time.
func plainPrefix(s string) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i <= len(s)-8; i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		// "Has a byte less than n" ((x-n..)&^x&0x80..) on w^0x02.. with
		// n = 0x21, which maps '"' to 0x20 and control bytes to control
		// bytes, and on w^'\\'.. with n = 1; w itself marks bytes >= 0x80.
		if (((w^(ones*0x02))-ones*0x21)|((w^(ones*'\\'))-ones)|w)&highs != 0 {
			break
		}
	}
	return i
}

// appendString writes s as a JSON string the way encoding/json does with
// HTML escaping off: invalid UTF-8 becomes U+FFFD, and U+2028 and U+2029
// are escaped because JavaScript treats them as line ends.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := plainPrefix(s); i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
