package strictjson

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// stops marks the bytes that end a run of plain string bytes: the quote,
// the backslash and the control bytes, which JSON does not allow raw.
var stops = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// skipString validates the string at s.i and moves past its closing quote.
// simple reports that its value is its bytes as they are: no escape, and
// ASCII only, so no UTF-8 to check.
func (s *scanner) skipString() (simple bool, err error) {
	b := s.b
	i := s.i + 1
	var high uint64 // OR of the bytes crossed: a high bit set where one is not ASCII
	escaped := false
	for {
		var h uint64
		i, h = plainRun(b, i)
		high |= h
		if i >= len(b) {
			return false, s.syntaxAt(i, "unexpected end of JSON input in a string")
		}
		switch b[i] {
		case '"':
			s.i = i + 1
			return !escaped && high&highBits == 0, nil
		case '\\':
			escaped = true
			n := escapeLen(b[i:])
			if n == 0 {
				return false, s.syntaxAt(i, "invalid escape in a string")
			}
			i += n
		default:
			return false, s.syntaxAt(i, "control character in a string")
		}
	}
}

// plainRun returns the index of the first quote, backslash or control
// byte at or after b[i], or len(b), and the OR of the bytes before it.
func plainRun(b []byte, i int) (int, uint64) {
	var high uint64
	rest := b[i:]
	for len(rest) >= 8 {
		w := binary.LittleEndian.Uint64(rest)
		if m := stops8(w); m != 0 {
			n := bits.TrailingZeros64(m) / 8
			return len(b) - len(rest) + n, high | w&(1<<(8*n)-1)
		}
		high |= w
		rest = rest[8:]
	}
	for len(rest) > 0 && !stops[rest[0]] {
		high |= uint64(rest[0])
		rest = rest[1:]
	}
	return len(b) - len(rest), high
}

const (
	ones     = 0x0101010101010101
	highBits = 0x8080808080808080
)

// stops8 is non-zero when one of the eight bytes of w is a quote, a
// backslash or a control byte. It is the "has a byte less than n" test,
// (x - n*ones) &^ x & highBits, twice: on w with each byte XORed with
// 0x02, which maps '"' to 0x20 and control bytes to control bytes, taking
// n = 0x21; and on w XORed with '\\', taking n = 1. Bytes of 0x80 and above
// are never marked (the &^ w), and a borrow can only mark a byte above a
// real mark, so the lowest mark is always a real one.
func stops8(w uint64) uint64 {
	quoteOrControl := (w ^ (ones * 0x02)) - ones*0x21
	backslash := (w ^ (ones * '\\')) - ones
	return (quoteOrControl | backslash) &^ w & highBits
}

// escapeLen returns the length of the valid escape at the start of e (a
// backslash), or 0.
func escapeLen(e []byte) int {
	if len(e) < 2 {
		return 0
	}
	switch e[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(e) >= 6 && hex4(e[2:6]) >= 0 {
			return 6
		}
	}
	return 0
}

// hex4 decodes four hex digits, or returns -1.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// appendUnquoted appends the value of a string whose contents q
// skipString has validated, decoded as encoding/json decodes it: invalid
// UTF-8 bytes and lone surrogates become U+FFFD.
func appendUnquoted(dst, q []byte) []byte {
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\\':
			switch c = q[i+1]; c {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := hex4(q[i+2:])
				i += 6
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if len(q)-i >= 6 && q[i] == '\\' && q[i+1] == 'u' {
						r2 = hex4(q[i+2:])
					}
					if pair := utf16.DecodeRune(r, r2); pair != unicode.ReplacementChar {
						dst = utf8.AppendRune(dst, pair)
						i += 6
						continue
					}
					r = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, c)
			}
			i += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(q[i:])
			dst = utf8.AppendRune(dst, r) // RuneError for an invalid byte
			i += size
		}
	}
	return dst
}

// foldName folds name as encoding/json folds member names to find a struct
// field: ASCII letters to upper case, every other rune to the smallest of
// its Unicode simple folding orbit (so the Kelvin sign K and "k" both
// become "K"). Two names fill the same field exactly when their folded
// forms are equal, as bytes.EqualFold would say.
func foldName(name string) string {
	out := make([]byte, 0, len(name))
	for _, r := range name {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			out = append(out, byte(r))
			continue
		}
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				r = next
				break
			}
			r = next
		}
		out = utf8.AppendRune(out, r)
	}
	return string(out)
}

// sameFold reports whether a and b fold to the same name. ASCII names of
// different lengths never do; other names may (the Kelvin sign takes three
// bytes, the "k" it folds to one).
func sameFold[A, B string | []byte](a A, b B) bool {
	// Names fold rune by rune: two ASCII first bytes that differ but for
	// case settle it at once, as they do for most pairs of names.
	if len(a) > 0 && len(b) > 0 && a[0] < utf8.RuneSelf && b[0] < utf8.RuneSelf && upper(a[0]) != upper(b[0]) {
		return false
	}
	if isASCII(a) && isASCII(b) {
		if len(a) != len(b) {
			return false
		}
		for i := 0; i < len(a); i++ {
			if upper(a[i]) != upper(b[i]) {
				return false
			}
		}
		return true
	}
	return foldName(string(a)) == foldName(string(b))
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

func isASCII[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
