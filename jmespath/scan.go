package jmespath

import (
	"encoding/binary"
	"math/bits"
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

// numberEnd returns the index past the JSON number at b[i], or -1. Most
// numbers in events are integers, which one test of the byte after their
// digits sends back; fractions and exponents are checked apart.
func numberEnd(b []byte, i int) int {
	if uint(i) < uint(len(b)) && b[i] == '-' {
		i++
	}
	if uint(i) >= uint(len(b)) {
		return -1
	}
	switch c := b[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		i = digitsEnd(b, i+1)
	default:
		return -1
	}
	if uint(i) < uint(len(b)) && (b[i] == '.' || b[i]|0x20 == 'e') {
		return fractionEnd(b, i)
	}
	return i
}

// fractionEnd is numberEnd from the '.', 'e' or 'E' at b[i] after the
// integer part.
func fractionEnd(b []byte, i int) int {
	if b[i] == '.' {
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
