// Package strictjson reads JSON text as encoding/json decodes it into Go
// structs, and refuses text that it could read two ways.
//
// encoding/json fills a struct field from every member whose name equals the
// field's name or equals it once both are folded ("ORDER_ID", "Order_Id"
// and "order_id" all fill `json:"order_id"`; "\u017fku", with a long s,
// fills `json:"sku"`), the last one winning; a null member leaves the field
// as it was, and a repeated object member is merged into it. It decodes a
// byte that is not UTF-8, and a \u escape of a lone UTF-16 surrogate, as
// U+FFFD. A reader that matches names exactly and keeps the last
// duplicate, as a map does, or that keeps the raw text, as json.RawMessage
// does, can therefore see another request than a handler that decodes the
// same text into a struct. This package refuses every such text, in the
// whole text and in every document that a [Document] step decodes:
//
//   - An object with two member names that fold to one another, exact
//     duplicates included, is refused wherever it is, with a
//     [*DuplicateNameError].
//   - A string, member name or value, holding a byte that is not UTF-8 or
//     a \u escape of a lone surrogate is refused wherever it is, with an
//     [*InvalidTextError]. U+FFFD itself is valid.
//   - On a path that [Find] follows, a [Member] step on an object holding
//     its name only in a case variant is refused too, with a
//     [*DuplicateNameError] (Variant set): a struct field of that name
//     would be filled from the variant.
//   - A Document step refuses a document longer than its Limit, with a
//     [*LimitError].
//
// Names fold as encoding/json folds them to match a struct field: ASCII
// letters to one case, other runes to one of their Unicode simple folding
// orbit ("k", "K" and the Kelvin sign K are one name; "ss" and "ß" are
// two). [EqualFold] compares two names so.
//
// Text that json.Valid refuses, or that nests deeper than encoding/json
// allows, is refused with a [*SyntaxError], before any other refusal
// found in it. What is accepted decodes as json.Unmarshal into an any
// with UseNumber decodes it: objects as map[string]any, arrays as []any,
// numbers as json.Number.
package strictjson

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
	// Limit, for Document, is the length of the longest document it
	// decodes, in bytes of the string's value; 0 sets none. It bounds
	// what a path can make a reader decode beyond the text it was given.
	Limit int
}

// Find validates doc and returns the value that path selects in it, or nil
// when the path selects nothing: a member that is absent, an index past the
// end, a Member step on anything but an object or an Index step on anything
// but an array. A Document step that gets anything but a string fails with
// a [*TypeError], once all the text has been read; text that is not JSON
// with a [*SyntaxError]; text that encoding/json could read two ways (see
// the package documentation) with a [*DuplicateNameError] or an
// [*InvalidTextError]; a document longer than its step's Limit with a
// [*LimitError].
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
	s, err := newScanner(doc, false)
	if err != nil {
		return nil, err
	}
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
// fold to one another (a [*DuplicateNameError]) and any string holding
// text that is not Unicode (an [*InvalidTextError]).
func Decode(doc []byte) (any, error) {
	s, err := newScanner(doc, false)
	if err != nil {
		return nil, err
	}
	return s.document()
}
