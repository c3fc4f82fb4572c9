package jmespath

import (
	"fmt"

	"github.com/gopowertools/lambda/internal/strictjson"
)

// Expression is a compiled JMESPath expression. It holds no mutable state:
// one Expression may be searched from many goroutines at once.
type Expression struct {
	src    string
	tree   tree
	strict tree  // tree, with strict set: what SearchJSON evaluates
	plan   *plan // how SearchJSON follows paths in raw bytes; nil: it decodes them
}

// Compile parses expr. It fails with a [*SyntaxError] for text that does
// not parse, an [*UnknownFunctionError] or [*ArityError] for a bad function
// call, an [*InvalidValueError] for a slice step of 0 or a decode limit
// that is not above 0, or a [*FunctionDefinitionError] for a malformed
// custom function.
func Compile(expr string, opts ...Option) (e *Expression, err error) {
	defer guard(&err)
	cfg := config{decodeLimit: defaultDecodeLimit}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	t, err := parse(expr, cfg.fns)
	if err != nil {
		return nil, err
	}
	t.decodeLimit = cfg.decodeLimit
	e = &Expression{src: expr, tree: t, strict: t, plan: planPath(t.root)}
	e.strict.strict = true
	return e, nil
}

// MustCompile is like [Compile] but panics if the expression does not
// compile. It is meant for expressions fixed in the program's source.
func MustCompile(expr string) *Expression {
	e, err := Compile(expr)
	if err != nil {
		panic(err)
	}
	return e
}

// String returns the source text of the expression.
func (e *Expression) String() string { return e.src }

// MultiSelect reports whether the expression's value is made by a
// multi-select list or hash, such as [a, b] or {a: a, b: b}, at its end
// (after a pipe or a sub-expression too): each member of the value is what
// one of the expressions in it selected, null where that was nothing.
func (e *Expression) MultiSelect() bool {
	for n := e.tree.root; n != nil; {
		switch n.kind {
		case nMultiList, nMultiHash:
			return true
		case nPipe:
			n = n.right
		case nSubexpr:
			n = n.children[len(n.children)-1]
		default:
			return false
		}
	}
	return false
}

// Search evaluates the expression against data, which must be made of the
// values encoding/json decodes into an any (see the package documentation).
// data is never modified. The result may share arrays and objects with data.
func (e *Expression) Search(data any) (result any, err error) {
	defer guard(&err)
	t := e.tree.within(&strictjson.Budget{Limit: e.tree.decodeLimit})
	return t.eval(t.root, data)
}

// guard turns a panic inside this package into an error, as a last
// defence: no input is meant to cause one. A panic in a user's function is
// not ours to swallow and is re-raised.
func guard(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if up, ok := r.(*userPanic); ok {
		panic(up.v)
	}
	*err = &internalError{v: fmt.Sprint(r)}
}
