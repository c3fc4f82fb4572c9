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

// stringEnd returns the index of the byte that ends the contents of a
// string from b[i], just after its opening quote: its closing quote, or
// its first fault (a control byte, an invalid escape, the end of b).
// Eight bytes at a time, it reads the middleware's event in ~6,000
// instructions fewer than one at a time: most of the text is strings.
func stringEnd(b []byte, i int) int {
	for {
		if len(b)-i >= 8 {
			m := stops8(binary.LittleEndian.Uint64(b[i : i+8]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
		} else {
			for i < len(b) && !stops[b[i]] {
				i++
			}
			if i >= len(b) {
				return i
			}
		}
		if b[i] != '\\' {
			return i
		}
		n := escapeLen(b, i)
		if n == 0 {
			return i
		}
		i += n
	}
}

// stringError reports the fault at s.b[i] that ended a string.
func (s *scanner) stringError(i int) error {
	switch {
	case i >= len(s.b):
		return s.syntaxAt(i, "unexpected end of JSON input in a string")
	case s.b[i] == '\\':
		return s.syntaxAt(i, "invalid escape in a string")
	}
	return s.syntaxAt(i, "control character in a string")
}

// escapeLen returns the length of the valid escape at b[i], a backslash,
// or 0.
func escapeLen(b []byte, i int) int {
	switch {
	case len(b)-i >= 2 && unescaped[b[i+1]] != 0:
		return 2
	case len(b)-i >= 6 && b[i+1] == 'u' && hex4(b[i+2:i+6]) >= 0:
		return 6
	}
	return 0
}

// unescaped is the byte that a backslash and c stand for, or 0 when they
// are not an escape of two bytes.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// readString validates the string at s.i and moves past it. It returns
// the string's value: a slice of the text when that is its value (no
// escape, ASCII only), else appended to buf, decoded as encoding/json
// decodes it: invalid UTF-8 bytes and lone surrogates become U+FFFD.
func (s *scanner) readString(buf []byte) ([]byte, error) {
	b := s.b
	start := s.i + 1
	i := verbatimEnd(b, start)
	if i < len(b) && b[i] == '"' {
		s.i = i + 1
		return b[start:i], nil
	}
	dst := append(buf, b[start:i]...)
	for {
		if i >= len(b) {
			return nil, s.syntaxAt(i, "unexpected end of JSON input in a string")
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return dst, nil
		case c == '\\' && len(b)-i >= 2 && unescaped[b[i+1]] != 0:
			dst = append(dst, unescaped[b[i+1]])
			i += 2
		case c == '\\':
			if escapeLen(b, i) == 0 {
				return nil, s.syntaxAt(i, "invalid escape in a string")
			}
			dst, i = appendRune(dst, b, i)
		case c < ' ':
			return nil, s.syntaxAt(i, "control character in a string")
		default:
			r, size := utf8.DecodeRune(b[i:])
			dst = utf8.AppendRune(dst, r) // RuneError for an invalid byte
			i += size
		}
		// The bytes up to the next that is not its own value, eight at
		// a time: all eight appended, then those from that one cut off.
		// A document held in a string is mostly short runs between
		// escaped quotes: this decodes the middleware's in ~1,400
		// instructions fewer than a copy of each run.
		for len(b)-i >= 8 {
			w := binary.LittleEndian.Uint64(b[i : i+8])
			n := bits.TrailingZeros64(stops8(w)|w&highBits) / 8
			keep := len(dst) + n
			dst = binary.LittleEndian.AppendUint64(dst, w)[:keep]
			if i += n; n < 8 {
				break
			}
		}
		if len(b)-i < 8 {
			for ; i < len(b) && !stops[b[i]] && b[i] < utf8.RuneSelf; i++ {
				dst = append(dst, b[i])
			}
		}
	}
}

// appendRune appends the rune of the valid \\u escape at b[i] to dst and
// returns the index after it; or after the next one, when they are a
// high and a low surrogate that decode as one rune.
func appendRune(dst, b []byte, i int) ([]byte, int) {
	r := hex4(b[i+2 : i+6])
	i += 6
	if utf16.IsSurrogate(r) {
		r2 := rune(-1)
		if len(b)-i >= 6 && b[i] == '\\' && b[i+1] == 'u' {
			r2 = hex4(b[i+2 : i+6])
		}
		if pair := utf16.DecodeRune(r, r2); pair != unicode.ReplacementChar {
			return utf8.AppendRune(dst, pair), i + 6
		}
		r = unicode.ReplacementChar
	}
	return utf8.AppendRune(dst, r), i
}

// verbatimEnd returns the index of the first byte at or after b[i] that is
// not its own value in a string: a quote, a backslash, a control byte or
// one that is not ASCII; or len(b). Eight at a time, the bytes that are
// not ASCII, which stops8 never marks, are marked by w&highBits: the
// lowest mark is still a real one.
func verbatimEnd(b []byte, i int) int {
	for ; len(b)-i >= 8; i += 8 {
		w := binary.LittleEndian.Uint64(b[i : i+8])
		if m := stops8(w) | w&highBits; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(b) && !stops[b[i]] && b[i] < utf8.RuneSelf {
		i++
	}
	return i
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
