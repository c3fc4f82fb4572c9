package jmespath

import (
	"encoding/binary"
	"math/bits"
)

// The lax scanner finds where values begin and end in a document known to
// be valid JSON, without validating what it crosses: SearchValidJSON uses
// it to reach the selected value. It looks only at quotes, backslashes and
// brackets, and mostly reads backwards, from the end of an object: the last
// of duplicate keys wins, so the first match met from the end is the
// answer, and the scan stops there. (In an API Gateway event the body is
// the last member but one or two.)
//
// On text that is not valid JSON the positions it returns are meaningless
// but stay within the bounds it is given, and every loop moves on at each
// step: a caller may get a wrong answer, never a panic or a hang. A
// function returns -1 where it cannot go on.
//
// Word-at-a-time searches use the "has a zero byte" trick, (x-0x01..)&^x:
// it marks every zero byte of x, and may also mark the byte above one (a
// borrow), never a byte below the lowest. A forward scan takes the lowest
// mark, which is exact; a backward scan takes the highest, so it checks the
// byte and goes on below it when the mark was a borrow.

// hasZero marks, with its high bit, each zero byte of x (and possibly the
// byte above one).
func hasZero(x uint64) uint64 { return (x - ones) &^ x & highs }

// spaceBack returns the index just past the last byte of b[lo:j] that is
// not JSON whitespace, or lo when there is none.
func spaceBack(b []byte, lo, j int) int {
	for j > lo && isSpace(b[j-1]) {
		j--
	}
	return j
}

// openQuote returns the index of the quote that opens the string whose
// closing quote is b[q], looking no lower than lo, or -1; escaped reports
// whether the string holds a backslash.
//
// In valid JSON the byte before an opening quote is never a backslash,
// while every quote inside a string is escaped, so directly preceded by
// one: the opening quote is the nearest quote without a backslash just
// before it. Marking quotes and backslashes a word at a time tells them
// apart with no step per escaped quote, of which a JSON body quoted in a
// string has one every few bytes. The marks of backslashes are exact in
// valid JSON: a borrow marks a byte above a backslash only if it is ']',
// which cannot follow one. A quote's borrow can mark a '#' after it, which
// the check of the byte below catches.
func openQuote(b []byte, lo, q int) (start int, escaped bool) {
	if lo < 0 || q > len(b) {
		return -1, false
	}
	var slashesSeen uint64
	j := q // b[j:q] holds no opening quote
	for j-8 >= lo {
		w := binary.LittleEndian.Uint64(b[j-8 : j])
		slashes := hasZero(w ^ (ones * '\\'))
		// A backslash's mark shifted up a byte lands on the byte after
		// it. The lowest byte's predecessor is in the next word down: the
		// check below covers it.
		if m := hasZero(w^(ones*'"')) &^ (slashes << 8); m != 0 {
			top := 63 - bits.LeadingZeros64(m)
			p := j - 8 + top>>3
			if b[p] == '"' && (p == lo || b[p-1] != '\\') {
				// Backslashes above the quote are in the string.
				return p, slashesSeen|slashes>>top>>1 != 0
			}
			slashesSeen |= slashes >> top >> 1
			j = p
			continue
		}
		slashesSeen |= slashes
		j -= 8
	}
	escaped = slashesSeen != 0
	for p := j - 1; p >= lo; p-- {
		switch {
		case b[p] == '"' && (p == lo || b[p-1] != '\\'):
			return p, escaped
		case b[p] == '\\':
			escaped = true
		}
	}
	return -1, false
}

// bracketMarks marks the bytes of w that are '"', '{', '}', '[' or ']'
// (see hasZero for the borrow). OR-ing 0x20 folds '[' into '{' and ']'
// into '}'; the only other bytes it folds onto the three are control bytes,
// which valid JSON has nowhere outside strings.
func bracketMarks(w uint64) uint64 {
	v := w | ones*0x20
	return hasZero(v^(ones*'"')) | hasZero(v^(ones*'{')) | hasZero(v^(ones*'}'))
}

// openBracket returns the index of the '{' or '[' that opens the container
// closed by b[c], looking no lower than lo, or -1.
func openBracket(b []byte, lo, c int) int {
	if lo < 0 || c >= len(b) {
		return -1
	}
	depth := 0
	j := c + 1 // b[j:c+1] is scanned
	for {
		p := j - 1
		if j-8 >= lo {
			m := bracketMarks(binary.LittleEndian.Uint64(b[j-8 : j]))
			if m == 0 {
				j -= 8
				continue
			}
			p = j - 8 + (63-bits.LeadingZeros64(m))>>3
		} else if p < lo {
			return -1
		}
		switch b[p] {
		case '"':
			s, _ := openQuote(b, lo, p)
			if s < 0 {
				return -1
			}
			p = s
		case '}', ']':
			depth++
		case '{', '[':
			if depth--; depth == 0 {
				return p
			}
		}
		j = p
	}
}

// valueStart returns the index where the value that ends just before b[end]
// starts, looking no lower than lo, or -1.
func valueStart(b []byte, lo, end int) int {
	if end <= lo || end > len(b) {
		return -1
	}
	switch b[end-1] {
	case '"':
		s, _ := openQuote(b, lo, end-1)
		return s
	case '}', ']':
		return openBracket(b, lo, end-1)
	}
	// A number or a literal: no delimiter in it.
	i := end - 1
	for i > lo && !isDelimiter(b[i-1]) {
		i--
	}
	return i
}

// isDelimiter reports whether c can come just before or after a number or
// a literal.
func isDelimiter(c byte) bool {
	return c == ',' || c == ':' || c == '[' || c == ']' || c == '{' || c == '}' || isSpace(c)
}

// valueEnd returns the index just past the value that starts at b[i], or
// -1. Strings are crossed with stringEnd, which also validates them.
func valueEnd(b []byte, i int) int {
	if i < 0 || i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i+1)
	case '{', '[':
		return closeBracket(b, i)
	}
	for i < len(b) && !isDelimiter(b[i]) {
		i++
	}
	return i
}

// closeBracket returns the index just past the '}' or ']' that closes the
// container opened by b[i], or -1.
func closeBracket(b []byte, i int) int {
	depth := 0
	for i >= 0 && i < len(b) {
		if i <= len(b)-8 {
			m := bracketMarks(binary.LittleEndian.Uint64(b[i : i+8]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
		switch b[i] {
		case '"':
			i = stringEnd(b, i+1)
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return -1
}
