package strictjson

import (
	"fmt"
	"strconv"
)

// SyntaxError reports text that is not JSON, or that is nested deeper than
// encoding/json allows.
type SyntaxError struct {
	Offset int    // in the text being read
	Quoted bool   // the text is a document held in a string (a Document step)
	Msg    string // what was wrong
}

func (e *SyntaxError) Error() string {
	if e.Quoted {
		return fmt.Sprintf("invalid JSON in a string, at offset %d of its value: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// DuplicateNameError reports an object in which encoding/json would fill one
// struct field from two members, or from a member the path does not name:
// Name and Other fold to one another (they are equal for an exact
// duplicate). Other is "" when the path's name, Name, is present only in
// a case variant, Variant.
type DuplicateNameError struct {
	Offset  int  // of the second member's name, or of the variant; -1 when unknown
	Quoted  bool // in a document held in a string (a Document step)
	Name    string
	Other   string
	Variant string
}

func (e *DuplicateNameError) Error() string {
	where := fmt.Sprintf(" at offset %d", e.Offset)
	if e.Offset < 0 {
		where = "" // found in a decoded value
	}
	if e.Quoted {
		where += " in a JSON document held in a string"
	}
	name := strconv.QuoteToASCII(e.Name)
	switch {
	case e.Variant != "":
		return fmt.Sprintf("member %s%s is a case variant of %s, which is absent: encoding/json would read it as %s",
			strconv.QuoteToASCII(e.Variant), where, name, name)
	case e.Name == e.Other:
		return fmt.Sprintf("member name %s repeated%s", name, where)
	}
	return fmt.Sprintf("member names %s and %s%s are one name to encoding/json", strconv.QuoteToASCII(e.Other), name, where)
}

// TypeError reports a step that needs a string, a Document or a
// Transform step, on a value that is not one. Name is the step's; Got is
// the value's JSON type: "null" (also when the path before it selected
// nothing), "boolean", "number", "array" or "object".
type TypeError struct {
	Name string
	Got  string
}

func (e *TypeError) Error() string {
	return "a string was expected, got " + e.Got
}

// InvalidTextError reports a string, a member name or a value, holding a
// byte that is not part of a UTF-8 encoding or a \u escape of a lone
// UTF-16 surrogate. encoding/json decodes either as U+FFFD: "acct-\xff"
// and "acct-\xfe" would be one value to it, and to a key read as it reads
// them, while a handler that keeps the raw text (json.RawMessage) sees
// two. U+FFFD itself, in UTF-8 or as \ufffd, is valid text.
type InvalidTextError struct {
	Offset int  // of the byte or the escape, in the text being read
	Quoted bool // in a document held in a string (a Document step)
}

func (e *InvalidTextError) Error() string {
	where := ""
	if e.Quoted {
		where = " of a JSON document held in a string"
	}
	return fmt.Sprintf("string at offset %d%s holds invalid UTF-8 or a lone surrogate, which encoding/json reads as U+FFFD", e.Offset, where)
}

// LimitError reports a reading that would take its [Budget] past its
// Limit: a document held in a string, a value built from the text, or
// what a Transform step makes.
type LimitError struct {
	Offset int  // in the text being read, where the budget ran out; -1 when unknown
	Quoted bool // in a document held in a string
	Limit  int  // the Budget's
	Len    int  // what the reading needed by then: more than Limit
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("decoding needs %d bytes or more, more than the budget of %d", e.Len, e.Limit)
}

// PathError reports an error of one of FindAll's paths, which reading the
// text alone would not meet: in a document or at a Transform step on the
// path, a case variant of its name, its value past the budget, a step
// that needs a string on something else. Path is the index of the path
// (the first of those that met it together).
type PathError struct {
	Path int
	Err  error
}

func (e *PathError) Error() string { return e.Err.Error() }

func (e *PathError) Unwrap() error { return e.Err }
