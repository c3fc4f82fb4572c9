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
//   - A reading past its [Budget] is refused, with a [*LimitError].
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
	// Transform replaces the string at hand with what the step's Transform
	// makes of its value, a string too, and goes on with it: JMESPath's
	// powertools_base64, say.
	Transform
	// Each is a projection: the rest of the path is followed in each
	// element of the array at hand, and selects the list of what it
	// selects in them, nothing left out; on anything but an array it
	// selects nothing, and the rest of the path is not followed.
	Each
	// Type ends a path: it selects the JSON type of the value at hand
	// ("object", "array", "string", "number", "boolean" or "null") as a
	// string, without reading into the value.
	Type
)

// Step is one step of a path.
type Step struct {
	Kind  StepKind
	Name  string // for Member; for Document and Transform, the step's name in errors
	Index int    // for Index, 0 or more
	// Select marks the first step of an element of a multi-select over
	// the value at hand, as JMESPath's a.[b, c]: when that value is null,
	// or the path before selected nothing, the path selects nothing, and
	// no step after it meets null.
	Select bool
	// Transform, for a Transform step, makes the step's string from the
	// value of the one at hand, which it only reads, spending what it
	// allocates from b, a copy of the reading's budget, which it returns
	// as it leaves it (by value, so that no pointer of the reading's
	// reaches it: through a function value, it would move every buffer
	// the reading holds to the heap). Its error is the reading's. It must
	// return UTF-8 text, in an array of its own that the reading keeps: a
	// value the path selects may be a string of it.
	Transform func(text []byte, b Budget) ([]byte, Budget, error)
}

// needsString reports whether the step reads the value of a string.
func (st *Step) needsString() bool { return st.Kind == Document || st.Kind == Transform }

// Find validates doc and returns the value that path selects in it, or nil
// when the path selects nothing: a member that is absent, an index past the
// end, a Member step on anything but an object or an Index step on anything
// but an array. A Document or Transform step that gets anything but a
// string fails with a [*TypeError], once all the text has been read; text
// that is not JSON with a [*SyntaxError]; text that encoding/json could
// read two ways (see the package documentation) with a
// [*DuplicateNameError] or an [*InvalidTextError]; a reading past b with a
// [*LimitError].
func Find(doc []byte, b *Budget, path []Step) (any, error) {
	v, err := FindAll(doc, b, path)
	if err != nil {
		if pe, ok := err.(*PathError); ok {
			return nil, pe.Err
		}
		return nil, err
	}
	return v[0], nil
}

// FindAll is [Find] for several paths, in one pass over doc, within one
// budget: result i is what paths[i] selects. It fails if any path fails,
// with the first error met: a [*PathError] naming the path, when the text
// alone is not at fault.
func FindAll(doc []byte, b *Budget, paths ...[]Step) ([]any, error) {
	qs := make([]query, len(paths))
	set := make([]*query, len(paths))
	for i, p := range paths {
		qs[i].path = p
		qs[i].index = i
		set[i] = &qs[i]
	}
	s, err := newScanner(doc, false, b)
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
			return nil, &PathError{Path: i, Err: qs[i].err}
		}
	}
	results := make([]any, len(qs))
	for i := range qs {
		results[i] = qs[i].result
	}
	return results, nil
}

// Decode validates and decodes doc within b, refusing any object with two
// names that fold to one another (a [*DuplicateNameError]), any string
// holding text that is not Unicode (an [*InvalidTextError]) and a
// document whose values cost more than b allows (a [*LimitError]).
func Decode(doc []byte, b *Budget) (any, error) {
	s, err := newScanner(doc, false, b)
	if err != nil {
		return nil, err
	}
	return s.document()
}
