// Package exprpath says where in a document a compiled JMESPath expression
// reads, so that the idempotency middleware can follow each place through
// the Go type that a handler decodes the document into, once, when the
// handler is built. It is the jmespath package's answer, not a second
// reading of the expression: jmespath sets Of when it is linked in, and
// nothing else may.
package exprpath

// StepKind is what a [Step] selects.
type StepKind uint8

const (
	// Member selects the member Name of an object.
	Member StepKind = iota
	// Index selects element Index (0 or more) of an array.
	Index
	// Each selects every element of an array: a projection ([*]), a
	// slice, a filter, or an index from the end.
	Each
	// Flatten selects the value itself, or each of its elements when it
	// is an array: what a[] makes of each element of a.
	Flatten
	// Values selects every value of an object (*).
	Values
	// Document selects the JSON document held in a string
	// (powertools_json): text that the document's reader decodes itself.
	Document
)

// Step is one step of a path.
type Step struct {
	Kind  StepKind
	Name  string // for Member
	Index int    // for Index
}

// SlotKind says where a value that an expression reads shows in its
// result.
type SlotKind uint8

const (
	// Inside: the value is read to make the result (a function's
	// argument, an operand, an element of a projection), or the result
	// may be another value.
	Inside SlotKind = iota
	// Whole: the result is the value.
	Whole
	// Element: the result, when it is a list (a multi-select list that
	// ends the expression), holds the value as its element Index.
	Element
	// Key: the result, when it is an object (a multi-select hash that
	// ends the expression), holds the value as its member Name.
	Key
)

// Read is a place of the document whose value an expression reads whole,
// and where that value shows in the result. The places an expression
// only steps through are the prefixes of its reads.
type Read struct {
	Path  []Step
	Slot  SlotKind
	Index int    // for Element
	Name  string // for Key
}

// Derived is an expression's steps into a value that a function, an
// operator or a multi-select made from values of the document: From holds
// the places of those values. Where the made value holds them is not
// known, so the steps may start anywhere inside them, and the first steps
// may be taken inside the made value itself (as [a, b][0].c reads a.c):
// any suffix of Steps may be taken from any place inside From.
type Derived struct {
	From  [][]Step
	Steps []Step
}

// Reads is where an expression reads.
type Reads struct {
	Reads   []Read
	Derived []Derived
}

// Of returns the reads of expr, a *jmespath.Expression.
var Of func(expr any) Reads
