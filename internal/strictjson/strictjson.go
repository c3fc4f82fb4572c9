// Package strictjson reads JSON text as encoding/json decodes it into Go
// structs, and refuses text that it could read two ways.
//
// encoding/json fills a struct field from every member whose name equals the
// field's name or equals it under Unicode simple case folding ("ORDER_ID",
// "Order_Id" and "order_id" all fill `json:"order_id"`; "\u017fku", with a
// long s, fills `json:"sku"`), the last one winning; a null member leaves the
// field as it was, and a repeated object member is merged into it. A reader
// that matches names exactly and keeps the last duplicate, as a map does, can
// therefore see another value than the handler that decodes the same text
// into a struct. This package refuses every text on which the two could
// differ, where it matters:
//
//   - [Find] follows a path of member names, array indexes and JSON
//     documents held in strings (JMESPath's powertools_json). In every object
//     on the path, a member other than the one exactly named by the path
//     whose name folds to the path's name is refused, and so is the path's
//     name alone in a case variant, with no exact member. Inside the
//     selected value, any two names of one object that fold to one another
//     are refused. Other objects are validated but their names are not
//     compared: their members are not selected.
//   - [Decode] decodes a whole document, refusing any object with two names
//     that fold to one another.
//
// Either validates the whole text as encoding/json does (json.Valid), and
// decodes what it returns as json.Unmarshal into an any does with
// UseNumber: objects as map[string]any, arrays as []any, numbers as
// json.Number, strings with invalid UTF-8 and lone surrogates replaced by
// U+FFFD. Names are compared after that decoding, as encoding/json compares
// them.
package strictjson

import (
	"fmt"
	"strconv"
)

// StepKind is what a [Step] selects.
type StepKind uint8

const (
	// Member selects the member Name of an object.
	Member StepKind = iota
	// Index selects element Index (0 or more) of an array.
	Index
	// Document decodes the string at hand as a JSON document, as JMESPath's
	// powertools_json does, and goes on in it.
	Document
	// Type ends a path: it selects the JSON type of the value at hand
	// ("object", "array", "string", "number", "boolean" or "null") as a
	// string, without reading into the value.
	Type
)

// Step is one step of a path.
type Step struct {
	Kind  StepKind
	Name  string // for Member
	Index int    // for Index, 0 or more
}

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

// TypeError reports a Document step on a value that is not a string: JSON
// text is needed there. Got is the value's JSON type: "null" (also when the
// path before it selected nothing), "boolean", "number", "array" or
// "object".
type TypeError struct {
	Got string
}

func (e *TypeError) Error() string {
	return "a JSON document held in a string was expected, got " + e.Got
}

// Find validates doc and returns the value that path selects in it, or nil
// when the path selects nothing: a member that is absent, an index past the
// end, a Member step on anything but an object or an Index step on anything
// but an array. A Document step that gets anything but a string fails with
// a [*TypeError]; text that is not JSON with a [*SyntaxError]; names that
// encoding/json could read two ways (see the package documentation) with a
// [*DuplicateNameError].
func Find(doc []byte, path []Step) (any, error) {
	v, err := FindAll(doc, path)
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

// FindAll is [Find] for several paths, in one pass over doc: result i is
// what paths[i] selects. It fails if any path fails, with the first error
// met.
func FindAll(doc []byte, paths ...[]Step) ([]any, error) {
	qs := make([]query, len(paths))
	set := make([]*query, len(paths))
	for i, p := range paths {
		qs[i].path = p
		set[i] = &qs[i]
	}
	s := scanner{b: doc}
	s.space()
	if err := s.find(set, 0); err != nil {
		return nil, s.orSyntax(err)
	}
	if err := s.end(); err != nil {
		return nil, err
	}
	// A path that needed a string and met none is reported only once
	// all the text is known to be JSON: invalid text comes first.
	for i := range qs {
		if qs[i].err != nil {
			return nil, qs[i].err
		}
	}
	results := make([]any, len(qs))
	for i := range qs {
		results[i] = qs[i].result
	}
	return results, nil
}

// Decode validates and decodes doc, refusing any object with two names that
// fold to one another (a [*DuplicateNameError]).
func Decode(doc []byte) (any, error) {
	s := scanner{b: doc}
	return s.document()
}
