package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// What the command prints for a person comes partly from outside it: keys,
// lease tokens and responses from the store, message bodies from a queue,
// values from a template, the text of errors from servers. A terminal acts
// on some characters instead of showing them: an escape sequence clears
// the screen or moves the cursor, a carriage return or a tab writes over
// what came before, a bidirectional override shows text in another order
// than it has. Each of them could forge or hide a line of the output, so
// every human-readable line goes through escape, or printable for a
// single value; the JSON output is for programs, and keeps the values as
// they are.

// escape returns the text s with each character that a terminal would not
// show as itself written as a Go escape (\x1b, \r, \t, \u202e; a byte
// that is not UTF-8 as \xff), and the rest as it is: for messages and
// lines that hold values among words of their own.
func escape(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case strconv.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// printable returns the value s as it is when a terminal shows it as
// itself and it holds no quote or backslash, else quoted, with Go's
// escapes (strconv.Quote): a quoted value then cannot be taken for a
// plain one, nor a plain one forged by a value that spells escapes.
func printable(s string) string {
	if clean(s) && !strings.ContainsAny(s, `"\`) {
		return s
	}
	return strconv.Quote(s)
}

// document returns the text s as it is when a terminal shows it as
// itself, else quoted with Go's escapes (strconv.Quote): for a JSON
// response or a message body, whose own quotes would have printable quote
// every one of them.
func document(s string) string {
	if clean(s) {
		return s
	}
	return strconv.Quote(s)
}

// clean reports whether a terminal shows every character of s as itself:
// s is UTF-8, and strconv.IsPrint holds for each character (letters,
// marks, numbers, punctuation, symbols and the ASCII space), which leaves
// out the C0 and C1 control characters, DEL, and the format characters,
// bidirectional overrides among them.
func clean(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}
