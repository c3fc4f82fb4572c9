package jmespath

import (
	"encoding/binary"
	"math/bits"
	"slices"
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
// as encoding/json does.
func appendUnescaped(b, s []byte) []byte {
	for i := 0; i < len(s); {
		if i <= len(s)-8 {
			// Stop at a backslash or a byte >= 0x80 (see stringStops).
			w := s8(s, i)
			var n int
			b, n = appendRun(b, s[i:i+8], (((w^(ones*'\\'))-ones)|w)&highs)
			if i += n; n == 8 {
				continue
			}
		}
		switch c := s[i]; {
		case c == '\\':
			b, i = appendEscape(b, s, i)
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			b, i = appendRune(b, s, i)
		}
	}
	return b
}

// appendString appends the value of the JSON string whose contents start
// at b[i] to dst, validating it as it goes, and returns the index past its
// closing quote, or -1 when it is invalid. It is scanString and
// appendUnescaped in one pass, for the string a powertools_json step reads.
//
// Its inner loop, unescapeRun, writes into dst's spare capacity directly,
// a whole word at a time, and takes \" and \\ itself: those are most of
// the escapes of a JSON document quoted in a string, such as an API
// Gateway body, and the runs between them are short. Everything else is
// one step of the outer loop.
func appendString(dst, b []byte, i int) ([]byte, int) {
	if i < 0 {
		return nil, -1 // never; it lets the compiler drop bounds checks
	}
	n := len(dst)
	buf := dst[:cap(dst)]
	for {
		if n > len(buf)-16 {
			buf = slices.Grow(buf[:n], 16)
			buf = buf[:cap(buf)]
		}
		if i <= len(b)-12 {
			r, w := unescapeRun(buf[n:], b[i:])
			i += r
			n += w
		} else if i < len(b) {
			// The last bytes too, from a copy with room for
			// unescapeRun's words: the zero bytes after them are stop
			// bytes, which it does not cross. It saves a step of this
			// loop per byte at the end of a string that ends its
			// document, as an API Gateway body does for SearchValidJSON.
			var t [24]byte
			r, w := unescapeRun(buf[n:], t[:copy(t[:12], b[i:])+12])
			i += r
			n += w
		}
		if i >= len(b) {
			return nil, -1
		}
		switch c := b[i]; {
		case c == '"':
			return buf[:n], i + 1
		case c == '\\':
			if escapeLen(b, i) == 0 {
				return nil, -1
			}
			var d []byte
			d, i = appendEscape(buf[:n], b, i)
			n, buf = len(d), d[:cap(d)]
		case c < ' ':
			return nil, -1
		case c < utf8.RuneSelf:
			buf[n] = c
			n++
			i++
		default:
			var d []byte
			d, i = appendRune(buf[:n], b, i)
			n, buf = len(d), d[:cap(d)]
		}
	}
}

// unescapeRun copies the contents of a JSON string from s to d a word at
// a time, decoding \" and \\ escapes, up to the first other stop byte or
// byte >= 0x80, or until fewer than 12 bytes of s or 11 of d are left. It
// returns the number of bytes it read and wrote.
//
// It is appendString's inner loop, a function of its own so that its few
// values stay in registers: in appendString's body they were spilled.
func unescapeRun(d, s []byte) (read, written int) {
	i, n := 0, 0
	// i and n only grow from 0, but saying so, and reading and writing
	// through t and u, fixed-size windows on s and d, lets the compiler
	// drop the bounds checks: k, a byte offset in a word, is at most 7.
	for i >= 0 && i <= len(s)-12 && n >= 0 && n <= len(d)-11 {
		t, u := s[i:i+12], d[n:n+11]
		w := binary.LittleEndian.Uint64(t)
		binary.LittleEndian.PutUint64(u, w)
		m := stringStopsOrHigh(w) // bytes >= 0x80 need decoding too
		if m == 0 {
			i += 8
			n += 8
			continue
		}
		k := bits.TrailingZeros64(m) >> 3 & 7
		if t[k] != '\\' {
			return i + k, n + k
		}
		switch c := t[k+1]; {
		case c == '"':
			// In a compact document, \":\" is between a key and a
			// string value, \",\" between a string value and the next
			// key: both escapes are taken in one step.
			if v := binary.LittleEndian.Uint32(t[k+1 : k+5]); v&0xffff00ff == '"'|'\\'<<16|'"'<<24 && (byte(v>>8) == ':' || byte(v>>8) == ',') {
				binary.LittleEndian.PutUint16(u[k:k+2], uint16(v))
				u[k+2] = '"'
				i += k + 5
				n += k + 3
				continue
			}
		case c != '\\':
			return i + k, n + k
		}
		u[k] = t[k+1]
		i += k + 2
		n += k + 1
	}
	return i, n
}

// s8 is the eight bytes of s at i as a little-endian word.
func s8(s []byte, i int) uint64 { return binary.LittleEndian.Uint64(s[i : i+8]) }

// appendRun appends to b the bytes of the eight-byte w before its first
// stop, the lowest byte marked in stops (all 8 when stops is 0), and returns
// their count. The whole word is appended and the part past the run cut off
// again, which beats a copy call for the short runs between the escapes of
// a JSON document quoted in a string, such as an API Gateway body.
func appendRun(b, w []byte, stops uint64) ([]byte, int) {
	b = append(b, w...)
	n := bits.TrailingZeros64(stops) >> 3
	return b[:len(b)-8+n], n
}

// appendEscape appends the value of the valid escape sequence at s[i] and
// returns the index past it. A \u escape of a high surrogate takes the low
// surrogate escape after it too, when there is one.
func appendEscape(b, s []byte, i int) ([]byte, int) {
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
			if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' && escapeLen(s, i) == 6 {
				if dec := utf16.DecodeRune(rr, hex4(s[i+2:i+6])); dec != unicode.ReplacementChar {
					return utf8.AppendRune(b, dec), i + 6
				}
			}
			rr = unicode.ReplacementChar
		}
		return utf8.AppendRune(b, rr), i
	default: // '"', '\\', '/'
		b = append(b, s[i+1])
	}
	return b, i + 2
}

// appendRune appends the UTF-8 sequence at s[i], or U+FFFD for an invalid
// one, and returns the index past it.
func appendRune(b, s []byte, i int) ([]byte, int) {
	rr, size := utf8.DecodeRune(s[i:])
	return utf8.AppendRune(b, rr), i + size
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
