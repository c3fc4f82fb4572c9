package jmespath

import (
	"bytes"
	"unicode/utf8"
)

// A JSON document quoted in a string, such as an API Gateway body, is
// scanned where it is, in its quoted form, instead of decoded into a buffer
// and scanned there: the decoding cost about as much as the scan. Its
// bytes are the document's, but for the escapes of the string: the \"
// around the document's strings, and the \\ of their own escapes (\\n,
// \\\").
//
// The quoted scan takes those forms only: any other escape of the string
// (\u0041 for a letter, \n for a line break, \/ outside a string), or
// anything invalid makes it give up, and the caller then decodes the
// string and scans the document (appendString and scanDoc). So it never
// decides alone that a document is invalid, and where it answers, it gives
// the answer of the decoded document: it decodes the selected value, and a
// key that is not its bytes as they are, as the string's decoding would.

// findQuoted applies steps to the document in the JSON string whose
// contents start at b[i], and returns the result and the index past the
// string's closing quote; ok is false when it gives up.
func findQuoted(b []byte, i int, steps []pathStep) (v any, end int, ok bool) {
	if v, i, ok = quotedFind(b, quotedSpace(b, i), steps, 0); !ok {
		return nil, -1, false
	}
	if i = quotedSpace(b, i); i >= len(b) || b[i] != '"' {
		return nil, -1, false
	}
	return v, i + 1, true
}

// quotedSpace returns the index of the first byte at or after b[i] that is
// not a space. Other whitespace is escaped in a string (\n, \t, \r): a
// document with some, such as an indented one, is left to the decoding;
// the quoted scan gives up at its first line break, having cost little.
func quotedSpace(b []byte, i int) int {
	for uint(i) < uint(len(b)) && b[i] == ' ' {
		i++
	}
	return i
}

// quotedFind is jsonReader.find on the quoted document: it applies steps
// to the value at b[i], at depth, and returns the index past it.
func quotedFind(b []byte, i int, steps []pathStep, depth int) (any, int, bool) {
	if len(steps) == 0 {
		end, plain := quotedStringEnd(b, i)
		if plain {
			// The common case, a string with no escape: its bytes are
			// its value.
			return string(b[i+2 : end-2]), end, true
		}
		if end = quotedSkip(b, i, depth); end < 0 {
			return nil, -1, false
		}
		// A number or literal is its bytes; anything with a string
		// in it, which starts with a backslash, is decoded as the
		// string's decoding would.
		v := b[i:end]
		if bytes.IndexByte(v, '\\') >= 0 {
			v = unescape(v)
		}
		r := jsonReader{b: v, depth: depth}
		value, ok := r.value()
		return value, end, ok
	}
	if uint(i) >= uint(len(b)) {
		return nil, -1, false
	}
	switch st, c := steps[0], b[i]; {
	case st.kind == stepJSON:
		return nil, -1, false // a document quoted twice
	case st.kind == stepField && c == '{', st.kind == stepIndex && c == '[':
		if depth+1 > maxJSONDepth {
			return nil, -1, false
		}
		return quotedFindMember(b, i, st, steps[1:], depth+1)
	}
	if i = quotedSkip(b, i, depth); i < 0 {
		return nil, -1, false
	}
	v, ok := noMatch(steps[1:])
	return v, i, ok
}

// quotedFindMember is jsonReader.findMember on the quoted document: it
// walks the object or array at b[i], at depth, for the member st selects,
// the last of duplicate keys winning.
func quotedFindMember(b []byte, i int, st pathStep, rest []pathStep, depth int) (any, int, bool) {
	object := st.kind == stepField
	closer := b[i] + 2 // '{'+2 is '}', '['+2 is ']'
	var result any
	found := false
	if i = quotedSpace(b, i+1); i < len(b) && b[i] == closer {
		v, ok := noMatch(rest)
		return v, i + 1, ok
	}
	for elem := 0; ; elem++ {
		match := !object && elem == st.index
		if object {
			end, plain := quotedStringEnd(b, i)
			switch {
			case end < 0:
				return nil, -1, false
			case plain:
				match = string(b[i+2:end-2]) == st.name
			default:
				_, match = keyMatch(unescape(b[i:end]), 0, st.name)
			}
			if i = quotedSpace(b, end); i >= len(b) || b[i] != ':' {
				return nil, -1, false
			}
			i = quotedSpace(b, i+1)
		}
		if match {
			v, end, ok := quotedFind(b, i, rest, depth)
			if !ok {
				return nil, -1, false
			}
			result, found, i = v, true, end
		} else if i = quotedSkip(b, i, depth); i < 0 {
			return nil, -1, false
		}
		if i = quotedSpace(b, i); i >= len(b) {
			return nil, -1, false
		}
		switch b[i] {
		case ',':
			i = quotedSpace(b, i+1)
		case closer:
			if !found {
				v, ok := noMatch(rest)
				return v, i + 1, ok
			}
			return result, i + 1, true
		default:
			return nil, -1, false
		}
	}
}

// quotedSkip returns the index past the value at b[i], in a container at
// depth, or -1.
func quotedSkip(b []byte, i, depth int) int {
	if uint(i) >= uint(len(b)) {
		return -1
	}
	switch b[i] {
	case '\\':
		i, _ = quotedStringEnd(b, i)
		return i
	case '{', '[':
		return quotedSkipContainer(b, i, depth+1)
	case 't':
		return literalEnd(b, i, "true")
	case 'f':
		return literalEnd(b, i, "false")
	case 'n':
		return literalEnd(b, i, "null")
	}
	return numberEnd(b, i)
}

// quotedSkipContainer returns the index past the object or array at b[i],
// at depth, or -1.
func quotedSkipContainer(b []byte, i, depth int) int {
	if depth > maxJSONDepth {
		return -1
	}
	closer := b[i] + 2
	if i = quotedSpace(b, i+1); i < len(b) && b[i] == closer {
		return i + 1
	}
	for {
		if closer == '}' {
			if i, _ = quotedStringEnd(b, i); i < 0 {
				return -1
			}
			if i = quotedSpace(b, i); i >= len(b) || b[i] != ':' {
				return -1
			}
			i = quotedSpace(b, i+1)
		}
		if i = quotedSkip(b, i, depth); i < 0 {
			return -1
		}
		if i = quotedSpace(b, i); i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = quotedSpace(b, i+1)
		case closer:
			return i + 1
		default:
			return -1
		}
	}
}

// quotedStringEnd returns the index past the string of the quoted
// document at b[i], from the \" that opens it to the \" that closes it,
// and whether its bytes are its value (no escape, all ASCII); -1 when it is
// not there, not valid or not in a form the quoted scan takes. Like
// stringEnd it does not check UTF-8: the string's decoding replaces what is
// invalid.
func quotedStringEnd(b []byte, i int) (end int, plain bool) {
	if i < 0 || i > len(b)-2 || b[i] != '\\' || b[i+1] != '"' {
		return -1, false
	}
	// Most strings have no escape and end within a word or two, where
	// nextStop, inlined, finds their end: it stops at bytes >= 0x80 too.
	if i = nextStop(b, i+2); i >= 0 && i <= len(b)-2 && b[i] == '\\' && b[i+1] == '"' {
		return i + 2, true
	}
	plain = true
	for i = nextStopOrHigh(b, i); ; i = nextStopOrHigh(b, i) {
		if i >= len(b) {
			return -1, false
		}
		switch c := b[i]; {
		case c >= utf8.RuneSelf:
			plain = false
			i++
		case c != '\\':
			// A quote ends the string the document is in; a control
			// byte is invalid.
			return -1, false
		default:
			n := quotedEscapeLen(b, i)
			if n == 0 {
				return i + 2, plain
			}
			if n < 0 {
				return -1, false
			}
			plain = false
			i += n
		}
	}
}

// quotedEscapeLen returns the length of the escapes at b[i], a backslash
// in a string of the quoted document: 0 for the \" that closes the string;
// 2 for \/, a '/'; for an escape of the document's string, \\ and its
// escape character, as one escape or as the bytes of \u and four hex
// digits, 3 to 7; -1 for anything else.
func quotedEscapeLen(b []byte, i int) int {
	if i+1 >= len(b) {
		return -1
	}
	switch b[i+1] {
	case '"':
		return 0
	case '/':
		return 2
	case '\\':
		if i+2 >= len(b) {
			return -1
		}
		switch b[i+2] {
		case '/', 'b', 'f', 'n', 'r', 't':
			return 3
		case 'u':
			if i+6 < len(b) && isHex(b[i+3]) && isHex(b[i+4]) && isHex(b[i+5]) && isHex(b[i+6]) {
				return 7
			}
		case '\\':
			if i+3 < len(b) && (b[i+3] == '"' || b[i+3] == '\\' || b[i+3] == '/') {
				return 4
			}
		}
	}
	return -1
}
