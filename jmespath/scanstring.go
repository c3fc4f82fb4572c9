package jmespath

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// Strings, for the scanner (scan.go): most of a Lambda event's bytes are
// in strings, so crossing one fast is most of what a key search costs.

// stringStops returns a word with the high bit set in the lowest byte of w
// that is '"', '\\' or a control byte, and possibly in bytes above it (a
// borrow from a hit can mark the byte above), but in no byte below it: only
// the lowest set bit is meaningful. It uses the classic "has a byte less
// than n" trick, (x-n..)&^x&0x80.., twice: on w^'\\' with n = 1 for the
// backslash and on w^0x02.. with n = 0x21 for the quote and the control
// bytes together, since XOR with 0x02 maps '"' to 0x20 and the control bytes
// to control bytes while every other byte stays at 0x21 or above. The two
// share the &^w, because XOR with a byte below 0x80 keeps the high bit.
func stringStops(w uint64) uint64 {
	// Go gives - and | the same precedence: the parentheses matter.
	return (((w ^ (ones * 0x02)) - ones*0x21) | ((w ^ (ones * '\\')) - ones)) &^ w & highs
}

// stringEnd returns the index just past the closing quote of the string
// whose contents start at b[i], i >= 0, or -1 when the string is invalid (a
// control byte, a bad escape, no closing quote). It does not look at bytes
// >= 0x80: encoding/json accepts invalid UTF-8 in strings (it decodes it to
// U+FFFD), so skipping a string needs no UTF-8 check.
//
// It reads eight bytes a step: most keys and short values end in the first
// or second word, where a sixteen-byte step did twice the work on the
// short ones for little gain on the long. It runs for nearly every string
// of a document, so it is kept short, with escapes handled apart.
func stringEnd(b []byte, i int) int {
	if i < 0 {
		return -1 // never; it lets the compiler drop the loop's bounds checks
	}
	for i <= len(b)-8 {
		if m := stringStops(binary.LittleEndian.Uint64(b[i : i+8])); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			if b[i] == '"' {
				return i + 1
			}
			return escapedStringEnd(b, i)
		}
		i += 8
	}
	return stringEndTail(b, i)
}

// nextStop returns the index of the first stop byte (see stringStops), or
// of a byte >= 0x80 it may take for one, at or after b[i], i >= 0, looking
// only at the whole words from i on: when there is none, the index past
// the last of them. Where b[nextStop(b, i)] is a quote, that quote closes
// the string: the busiest loops check that, with no call, before asking
// stringEnd. Leaving out stringStops' &^w, which only keeps bytes >= 0x80
// unmarked, saves two operations a word; a string with such bytes, rare
// in Lambda events, is then crossed by stringEnd as well.
func nextStop(b []byte, i int) int {
	for i <= len(b)-8 {
		w := binary.LittleEndian.Uint64(b[i : i+8])
		if m := (((w ^ (ones * 0x02)) - ones*0x21) | ((w ^ (ones * '\\')) - ones)) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	return i
}

// stringStopsOrHigh is stringStops that also marks the bytes >= 0x80,
// stringStops(w) | w&highs simplified: for the loops that decode a string
// or check its UTF-8, which must stop there.
func stringStopsOrHigh(w uint64) uint64 {
	return (((w ^ (ones * 0x02)) - ones*0x21) | ((w ^ (ones * '\\')) - ones) | w) & highs
}

// nextStopOrHigh returns the index of the first stop byte (see
// stringStops) or byte >= 0x80 at or after b[i], or len(b).
func nextStopOrHigh(b []byte, i int) int {
	for ; i <= len(b)-8; i += 8 {
		if m := stringStopsOrHigh(binary.LittleEndian.Uint64(b[i : i+8])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(b) && b[i] >= ' ' && b[i] != '"' && b[i] != '\\' && b[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// escapedStringEnd is stringEnd from a stop byte at b[i] that is not the
// closing quote: a backslash, or a control byte that makes it invalid.
func escapedStringEnd(b []byte, i int) int {
	for {
		if i = escapeEnd(b, i); i < 0 {
			return -1
		}
		for {
			if i > len(b)-8 {
				return stringEndTail(b, i)
			}
			if m := stringStops(binary.LittleEndian.Uint64(b[i : i+8])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if b[i] == '"' {
			return i + 1
		}
	}
}

// stringEndTail is stringEnd for the last eight bytes or fewer of b.
func stringEndTail(b []byte, i int) int {
	for i < len(b) {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c == '\\':
			if i = escapeEnd(b, i); i < 0 {
				return -1
			}
		case c < ' ':
			return -1
		default:
			i++
		}
	}
	return -1
}

// escapeEnd returns the index past the escape sequence at b[i], or -1 when
// b[i] is not a backslash (a control byte, for the callers) or the escape is
// invalid.
func escapeEnd(b []byte, i int) int {
	if b[i] != '\\' {
		return -1
	}
	n := escapeLen(b, i)
	if n == 0 {
		return -1
	}
	return i + n
}

// scanString is stringEnd that also reports whether the string is plain:
// its contents are its value as they are, with no escape and valid UTF-8.
func scanString(b []byte, i int) (end int, plain bool) {
	start := i
	escaped, high := false, false
	for {
		if i = nextStopOrHigh(b, i); i >= len(b) {
			return -1, false
		}
		switch c := b[i]; {
		case c == '"':
			plain = !escaped && (!high || utf8.Valid(b[start:i]))
			return i + 1, plain
		case c == '\\':
			n := escapeLen(b, i)
			if n == 0 {
				return -1, false
			}
			escaped = true
			i += n
		case c < ' ':
			return -1, false
		default: // c >= utf8.RuneSelf
			high = true
			i++
		}
	}
}

// escapeLen returns the length of the valid escape sequence at b[i] (a
// backslash), or 0.
func escapeLen(b []byte, i int) int {
	if i+1 >= len(b) {
		return 0
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if i+5 < len(b) && isHex(b[i+2]) && isHex(b[i+3]) && isHex(b[i+4]) && isHex(b[i+5]) {
			return 6
		}
	}
	return 0
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
