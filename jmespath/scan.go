package jmespath

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// The scanner moves over JSON text, validating it, without building
// values: it is how SearchJSON passes over the parts of an event it does
// not select, and the time a key search takes is mostly its time. Two
// things make it fast on Lambda events, which are mostly short strings and
// indentation:
//
//   - strings and runs of spaces are crossed eight bytes a step (SWAR:
//     bit tricks on uint64 words), so a typical key or value takes one or
//     two steps instead of a loop iteration per byte;
//   - objects and arrays are walked by plain loops that handle string
//     members inline, with a call only per nested container, not per value.
//
// Positions are ints; -1 means the text is not valid JSON. The scanner may
// refuse valid JSON that encoding/json accepts (only documents nested
// beyond maxJSONDepth); callers then fall back to encoding/json, which has
// the last word.

const (
	ones  = 0x0101010101010101 // 0x01 in every byte
	highs = 0x8080808080808080 // the high bit of every byte
)

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
		s := b[i:]
		for len(s) >= 8 {
			// Stop at bytes >= 0x80 too: stringStops(w) | w&highs, which
			// simplifies to this.
			w := binary.LittleEndian.Uint64(s)
			if m := (((w ^ (ones * 0x02)) - ones*0x21) | ((w ^ (ones * '\\')) - ones) | w) & highs; m != 0 {
				s = s[bits.TrailingZeros64(m)>>3:]
				break
			}
			s = s[8:]
		}
		for len(s) > 0 && s[0] >= ' ' && s[0] != '"' && s[0] != '\\' && s[0] < utf8.RuneSelf {
			s = s[1:]
		}
		if len(s) == 0 {
			return -1, false
		}
		i = len(b) - len(s)
		switch c := s[0]; {
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

// space returns the index of the first byte at or after i that is not
// JSON whitespace. Its common case, no whitespace at all, is inlined.
func space(b []byte, i int) int {
	if uint(i) < uint(len(b)) && b[i] > ' ' {
		return i
	}
	return skipSpace(b, i)
}

// skipSpace is space for when there may be whitespace. Each whitespace
// byte is typically followed by a run of spaces, indentation or the space
// after a colon, which is crossed eight bytes at a time.
//
// It is kept out of line so that space is small enough to be inlined.
//
//go:noinline
func skipSpace(b []byte, i int) int {
	for uint(i) < uint(len(b)) {
		if c := b[i]; c > ' ' || c != ' ' && c != '\n' && c != '\t' && c != '\r' {
			return i
		}
		i++
		if i <= len(b)-8 {
			// To the first byte that is not a space, or 8 bytes on when
			// all are: TrailingZeros64(0) is 64.
			i += bits.TrailingZeros64(binary.LittleEndian.Uint64(b[i:i+8])^(ones*' ')) >> 3
		}
	}
	return i
}

// skipValue returns the index just past the value that starts at b[i],
// or -1. depth is the nesting depth of the value's container.
func skipValue(b []byte, i, depth int) int {
	if i < 0 || i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i+1)
	case '{':
		return skipObject(b, i, depth+1)
	case '[':
		return skipArray(b, i, depth+1)
	case 't':
		return literalEnd(b, i, "true")
	case 'f':
		return literalEnd(b, i, "false")
	case 'n':
		return literalEnd(b, i, "null")
	}
	return numberEnd(b, i)
}

// literalEnd returns the index past lit at b[i], or -1.
func literalEnd(b []byte, i int, lit string) int {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	return -1
}

// skipMember returns the index past the member value at b[i] of a
// container at depth, and past the whitespace after it. Strings, the most
// common members, are handled here rather than through skipValue.
func skipMember(b []byte, i, depth int) int {
	if uint(i) < uint(len(b)) && b[i] == '"' {
		// Where nextStop stopped short of a closing quote, stringEnd goes
		// on from there: there is no stop byte before it. (The same two
		// steps are written out in skipObject: as a function they are
		// past the inliner's budget, and the call costs 10 % of a scan.)
		if k := nextStop(b, i+1); uint(k) < uint(len(b)) && b[k] == '"' {
			i = k + 1
		} else {
			i = stringEnd(b, k)
		}
	} else {
		i = skipValue(b, i, depth)
	}
	if i < 0 {
		return -1
	}
	return space(b, i)
}

// skipObject returns the index past the object at b[i], a '{' at depth,
// or -1. It is the scanner's busiest loop, so the steps of a member are
// written out in it rather than called.
func skipObject(b []byte, i, depth int) int {
	if depth > maxJSONDepth {
		return -1
	}
	i = space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if uint(i) >= uint(len(b)) || b[i] != '"' {
			return -1
		}
		// In an indented document a key without escapes is followed by
		// ": " and the value: its closing quote and those two bytes are
		// checked with one four-byte load. (k >= 0 always holds; saying
		// so drops the bounds checks.)
		if k := nextStop(b, i+1); k >= 0 && k <= len(b)-4 && binary.LittleEndian.Uint32(b[k:k+4])&0xffffff == '"'|':'<<8|' '<<16 && b[k+3] > ' ' {
			i = k + 3
		} else {
			if uint(k) < uint(len(b)) && b[k] == '"' {
				i = k + 1
			} else if i = stringEnd(b, k); i < 0 {
				return -1
			}
			i = space(b, i)
			if uint(i) >= uint(len(b)) || b[i] != ':' {
				return -1
			}
			i = space(b, i+1)
		}
		if uint(i) < uint(len(b)) && b[i] == '"' {
			if k := nextStop(b, i+1); uint(k) < uint(len(b)) && b[k] == '"' {
				i = k + 1
			} else {
				i = stringEnd(b, k)
			}
		} else {
			i = skipValue(b, i, depth)
		}
		if i < 0 {
			return -1
		}
		if j := nextIndented(b, i); j > 0 {
			i = j
			continue
		}
		i = space(b, i)
		if uint(i) >= uint(len(b)) {
			return -1
		}
		switch b[i] {
		case ',':
			i = space(b, i+1)
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

// nextIndented returns the index of the next member after a value that
// ends at b[i], when b[i:] is ",\n" and fewer than eight spaces of
// indentation, as between the members of an indented document; otherwise
// -1, and the caller takes the general path. It is one step, small enough
// to be inlined into the loops over members.
func nextIndented(b []byte, i int) int {
	if i < 0 || i > len(b)-11 {
		return -1
	}
	t := b[i : i+11]
	if binary.LittleEndian.Uint16(t) != ','|'\n'<<8 {
		return -1
	}
	j := 2 + bits.TrailingZeros64(binary.LittleEndian.Uint64(t[2:])^(ones*' '))>>3
	if t[j] <= ' ' {
		return -1
	}
	return i + j
}

// skipArray returns the index past the array at b[i], a '[' at depth, or
// -1.
func skipArray(b []byte, i, depth int) int {
	if depth > maxJSONDepth {
		return -1
	}
	i = space(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		if i = skipMember(b, i, depth); uint(i) >= uint(len(b)) {
			return -1
		}
		switch b[i] {
		case ',':
			i = space(b, i+1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
}

// numberEnd returns the index past the JSON number at b[i], or -1.
func numberEnd(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digitsEnd(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i+1 >= len(b) || !isDigit(b[i+1]) {
			return -1
		}
		i = digitsEnd(b, i+2)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		i = digitsEnd(b, i+1)
	}
	return i
}

func digitsEnd(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}
