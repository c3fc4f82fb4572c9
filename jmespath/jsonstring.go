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
	return appendUnescaped(make([]byte, 0, len(s)+utf8.UTFMax), s)
}

// appendUnescaped appends the decoded contents s of a valid JSON string to
// b: escapes decoded, invalid UTF-8 and lone surrogates replaced by U+FFFD,
// as encoding/json does. Runs of plain ASCII are copied a word at a time
// (the word is appended whole and the part past the run cut off again),
// which beats a copy call for the short runs between the escapes of a JSON
// document quoted in a string, such as an API Gateway body.
func appendUnescaped(b, s []byte) []byte {
	for i := 0; i < len(s); {
		if i <= len(s)-8 {
			w := binary.LittleEndian.Uint64(s[i : i+8])
			b = binary.LittleEndian.AppendUint64(b, w)
			// The first backslash or byte >= 0x80 (see stringStops).
			m := (((w ^ (ones * '\\')) - ones) | w) & highs
			n := bits.TrailingZeros64(m) >> 3 // 8 when m is 0
			b = b[:len(b)-8+n]
			if i += n; n == 8 {
				continue
			}
		}
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
			b = append(b, c)
			i++
		default:
			rr, size := utf8.DecodeRune(s[i:])
			b = utf8.AppendRune(b, rr)
			i += size
		}
	}
	return b
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
