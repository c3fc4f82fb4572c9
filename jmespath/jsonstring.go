package jmespath

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// unquoteJSON decodes a quoted JSON string exactly as encoding/json does.
func unquoteJSON(q []byte) (string, bool) {
	b, ok := unquoteBytes(q)
	return string(b), ok
}

func unquoteBytes(q []byte) ([]byte, bool) {
	r := jsonReader{b: q}
	if len(q) < 2 || q[0] != '"' {
		return nil, false
	}
	if _, ok := r.skipString(); !ok || r.i != len(q) {
		return nil, false
	}
	return unescape(q[1 : len(q)-1]), true
}

// unescape decodes the contents s of a valid JSON string, one that
// scanString accepted.
func unescape(s []byte) []byte {
	b := make([]byte, 0, len(s)+utf8.UTFMax)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			switch s[i+1] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(s[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(rr) {
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[i+2:i+6])); dec != unicode.ReplacementChar {
							i += 6
							b = utf8.AppendRune(b, dec)
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // '"', '\\', '/'
				b = append(b, s[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			j := escapeOrHigh(s, i+1)
			b = append(b, s[i:j]...)
			i = j
		default:
			rr, size := utf8.DecodeRune(s[i:])
			b = utf8.AppendRune(b, rr)
			i += size
		}
	}
	return b
}

// escapeOrHigh returns the index of the first backslash or byte >= 0x80 in
// s at or after i, or len(s), eight bytes a step (see stringStops).
func escapeOrHigh(s []byte, i int) int {
	for ; i <= len(s)-8; i += 8 {
		w := binary.LittleEndian.Uint64(s[i : i+8])
		if m := (((w ^ (ones * '\\')) - ones) | w) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s) && s[i] != '\\' && s[i] < utf8.RuneSelf; i++ {
	}
	return i
}

func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case isDigit(c):
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
