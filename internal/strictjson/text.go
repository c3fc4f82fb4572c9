package strictjson

import (
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
	var high byte // OR of the bytes crossed: >= 0x80 when one is not ASCII
	escaped := false
	for {
		for i < len(b) && !stops[b[i]] {
			high |= b[i]
			i++
		}
		if i >= len(b) {
			return false, s.syntaxAt(i, "unexpected end of JSON input in a string")
		}
		switch b[i] {
		case '"':
			s.i = i + 1
			return !escaped && high < utf8.RuneSelf, nil
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

// sameFold reports whether name and want fold to the same name. ASCII
// names of different lengths never do; other names may (the Kelvin sign
// takes three bytes, the "k" it folds to one).
func sameFold(name []byte, want string) bool {
	if isASCII(name) && isASCII(want) {
		if len(name) != len(want) {
			return false
		}
		for i := range name {
			if upper(name[i]) != upper(want[i]) {
				return false
			}
		}
		return true
	}
	return foldName(string(name)) == foldName(want)
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
