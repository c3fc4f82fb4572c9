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

// What stringEnd met in a string, besides its other bytes.
const (
	escaped   = 1 << iota // a backslash escape
	surrogate             // a \u escape of a UTF-16 surrogate
)

// stringEnd returns the index of the byte that ends the contents of a
// string from b[i], just after its opening quote: its closing quote, or
// its first fault of grammar (a control byte, an invalid escape, the end
// of b). flags says which escapes it met on the way.
//
// It reads eight bytes at a time, since most of an event is strings that
// the paths do not select: on the middleware's 2.2 KB event that is 8,100
// instructions fewer than a byte at a time, 2.4 % of a first call's
// (the middleware's steady first call under cachegrind: 345,200 against
// 337,100).
func stringEnd(b []byte, i int) (end int, flags uint8) {
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
				return i, flags
			}
		}
		if b[i] != '\\' {
			return i, flags
		}
		n := escapeLen(b, i)
		if n == 0 {
			return i, flags
		}
		flags |= escaped
		// \uD800 to \uDFFF: a 'd' and a digit of 8 or more.
		if n == 6 && b[i+2]|0x20 == 'd' && b[i+3] >= '8' {
			flags |= surrogate
		}
		i += n
	}
}

// checkText reads the text of doc, before the scanner reads its JSON:
// ascii reports that all of it is ASCII; err, that it is not UTF-8.
// Text that is not UTF-8 is refused here, once, so that no string needs
// its bytes checked again: a byte that is not part of a UTF-8 encoding is
// decoded by encoding/json as U+FFFD, like U+FFFD itself, so texts that
// differ there would be one value. Outside strings, JSON's grammar takes
// no byte of 0x80 or more: err is a *SyntaxError when the text is not
// JSON either, else an *InvalidTextError. A document held in a string
// decoded by readString is UTF-8.
func checkText(doc []byte, quoted bool) (ascii bool, err error) {
	var seen uint64 // all bytes ORed, eight at a time
	p := doc
	for ; len(p) >= 32; p = p[32:] {
		le := binary.LittleEndian
		seen |= le.Uint64(p) | le.Uint64(p[8:]) | le.Uint64(p[16:]) | le.Uint64(p[24:])
	}
	for _, c := range p {
		seen |= uint64(c)
	}
	if seen&highBits == 0 {
		return true, nil
	}
	if utf8.Valid(doc) {
		return false, nil
	}
	v := scanner{b: doc, quoted: quoted, syntaxOnly: true}
	v.space()
	if err := v.skip(); err != nil {
		return false, err
	}
	if err := v.end(); err != nil {
		return false, err
	}
	for i := 0; ; {
		r, size := utf8.DecodeRune(doc[i:])
		if r == utf8.RuneError && size == 1 {
			return false, &InvalidTextError{Offset: i, Quoted: quoted}
		}
		i += size
	}
}

// loneSurrogate returns the index of the first \u escape of a UTF-16
// surrogate in b[i:end], the contents of a string whose grammar is valid,
// that is not a high one followed by a low one, or -1. encoding/json
// decodes such an escape as U+FFFD, like U+FFFD itself, so texts that
// differ there would be one value.
func loneSurrogate(b []byte, i, end int) int {
	for i < end {
		switch {
		case b[i] != '\\':
			i++
		case b[i+1] != 'u':
			i += 2
		case !utf16.IsSurrogate(hex4(b[i+2 : i+6])):
			i += 6
		case surrogatePair(b[i:end]):
			i += 12
		default:
			return i
		}
	}
	return -1
}

// surrogatePair reports whether b starts with two valid \u escapes that
// are a high and a low surrogate, which decode as one rune.
func surrogatePair(b []byte) bool {
	if len(b) < 12 || b[6] != '\\' || b[7] != 'u' {
		return false
	}
	return utf16.DecodeRune(hex4(b[2:6]), hex4(b[8:12])) != unicode.ReplacementChar
}

// checkSurrogates refuses the contents of the string s.b[start:end],
// whose grammar is valid, if they hold a lone surrogate.
func (s *scanner) checkSurrogates(start, end int) error {
	if i := loneSurrogate(s.b, start, end); i >= 0 {
		return &InvalidTextError{Offset: i, Quoted: s.quoted}
	}
	return nil
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
// the string's value, decoded as encoding/json decodes it: a slice of the
// text when that is its value (no escape, ASCII only), and then verbatim
// is set; else appended to buf. A lone surrogate (see loneSurrogate) is
// refused with an [*InvalidTextError]; s.b is UTF-8 (see checkText).
func (s *scanner) readString(buf []byte) (v []byte, verbatim bool, err error) {
	b := s.b
	start := s.i + 1
	i := verbatimEnd(b, start)
	if i < len(b) && b[i] == '"' {
		s.i = i + 1
		return b[start:i], true, nil
	}
	dst := buf
	if end, _ := stringEnd(b, start); end < len(b) && b[end] == '"' && end-start > cap(buf)-len(buf) {
		// Room for the whole value at once, where appending would
		// grow through arrays of up to twice its size.
		if n := len(buf) + decodedLen(b, start, end); n > cap(buf) {
			dst = append(make([]byte, 0, n), buf...)
		}
	}
	dst = append(dst, b[start:i]...)
	for {
		if i >= len(b) {
			return nil, false, s.syntaxAt(i, "unexpected end of JSON input in a string")
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return dst, false, nil
		case c == '\\' && len(b)-i >= 2 && unescaped[b[i+1]] != 0:
			dst = append(dst, unescaped[b[i+1]])
			i += 2
		case c == '\\':
			if escapeLen(b, i) == 0 {
				return nil, false, s.syntaxAt(i, "invalid escape in a string")
			}
			r, n := escapedRune(b[i:])
			if r < 0 {
				return nil, false, &InvalidTextError{Offset: i, Quoted: s.quoted}
			}
			dst = utf8.AppendRune(dst, r)
			i += n
		case c < ' ':
			return nil, false, s.syntaxAt(i, "control character in a string")
		default: // a byte of 0x80 or more
			dst = append(dst, c)
			i++
		}
		// The bytes up to the next that is not its own value.
		run := verbatimEnd(b, i)
		dst = append(dst, b[i:run]...)
		i = run
	}
}

// decodedLen is the length of the value of the string whose contents,
// valid in grammar, are b[i:end]: at most end-i, since no escape is
// shorter than what it stands for.
func decodedLen(b []byte, i, end int) int {
	n := 0
	for i < end {
		switch {
		case b[i] != '\\':
			n++
			i++
		case b[i+1] != 'u':
			n++
			i += 2
		default:
			r, size := escapedRune(b[i:end])
			if r < 0 {
				r = utf8.RuneError // refused when read
			}
			n += utf8.RuneLen(r)
			i += size
		}
	}
	return n
}

// escapedRune returns the rune of the valid \u escape that b starts
// with, and the length of the text it takes: 12 for a high and a low
// surrogate, which decode as one rune. A lone surrogate gives -1.
func escapedRune(b []byte) (rune, int) {
	r := hex4(b[2:6])
	switch {
	case !utf16.IsSurrogate(r):
		return r, 6
	case surrogatePair(b):
		return utf16.DecodeRune(r, hex4(b[8:12])), 12
	}
	return -1, 6
}

// verbatimEnd returns the index of the first byte at or after b[i] that is
// not its own value in a string: a quote, a backslash, a control byte or
// one that is not ASCII; or len(b).
func verbatimEnd(b []byte, i int) int {
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
