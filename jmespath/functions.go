package jmespath

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gopowertools/lambda/internal/strictjson"
)

// ArgType is a set of JMESPath types that a function parameter accepts.
// Combine them with |, as in TypeString|TypeNull.
type ArgType uint16

// The JMESPath types. TypeArrayNumber and TypeArrayString accept arrays
// whose elements are all numbers, or all strings (an empty array is both);
// TypeArray accepts every array. TypeExpRef accepts an expression reference
// (&expr), which the function receives as an [*ExpRef].
const (
	TypeNull ArgType = 1 << iota
	TypeBoolean
	TypeNumber
	TypeString
	TypeArray
	TypeObject
	TypeExpRef
	TypeArrayNumber
	TypeArrayString

	// TypeAny accepts every JSON value, but not an expression reference.
	TypeAny = TypeNull | TypeBoolean | TypeNumber | TypeString | TypeArray | TypeObject
)

var argTypeNames = [...]string{"null", "boolean", "number", "string", "array", "object", "expref", "array[number]", "array[string]"}

func (t ArgType) String() string {
	if t == TypeAny {
		return "any"
	}
	var names []string
	for i, name := range argTypeNames {
		if t&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "nothing"
	}
	return strings.Join(names, " or ")
}

// Param describes one parameter of a [Function].
type Param struct {
	Types ArgType // the types an argument may have; must not be 0
}

// Function is a JMESPath function. Name and the number of arguments are
// checked when an expression is compiled; the type of each argument is
// checked against Params before Call runs, and a mismatch fails the search
// with an [*InvalidTypeError], as for the built-in functions.
//
// When Variadic is set, the last parameter may be repeated, and at least
// len(Params) arguments are required.
//
// Call receives the evaluated arguments (an [*ExpRef] for an expression
// reference) and must not modify them: they may be part of the searched
// document. An error it returns is returned by Search unchanged; a panic in
// it is not recovered. Call may be called from many goroutines at once.
type Function struct {
	Name     string
	Params   []Param
	Variadic bool
	Call     func(args []any) (any, error)

	builtin bool // Call is this package's; internal panics may be recovered
	// decode, when set, is called instead of Call, with the search's
	// budget: the Powertools functions' (see decoder).
	decode func(args []any, b *strictjson.Budget) (any, error)
}

// FunctionDefinitionError reports a [Function] given to [WithFunctions] that
// cannot be called: a name that is not an identifier, no Call, a parameter
// without types.
type FunctionDefinitionError struct {
	Name string
	Msg  string
}

func (e *FunctionDefinitionError) Error() string {
	return fmt.Sprintf("jmespath: function %q: %s", e.Name, e.Msg)
}

// ExpRef is an expression reference (&expr) passed to a function.
type ExpRef struct {
	t *tree
	n *node // the referenced expression, in t
}

// Search evaluates the referenced expression against data.
func (r *ExpRef) Search(data any) (any, error) { return r.t.eval(r.n, data) }

func (f *Function) arity() (min, max int) {
	if f.Variadic {
		return len(f.Params), -1
	}
	return len(f.Params), len(f.Params)
}

func (f *Function) validate() error {
	if f.Name == "" || !isIdentStart(f.Name[0]) || strings.IndexFunc(f.Name, func(r rune) bool {
		return r > 0x7f || !isIdentPart(byte(r))
	}) >= 0 {
		return &FunctionDefinitionError{Name: f.Name, Msg: "name is not an unquoted identifier"}
	}
	if f.Call == nil {
		return &FunctionDefinitionError{Name: f.Name, Msg: "Call is nil"}
	}
	if f.Variadic && len(f.Params) == 0 {
		return &FunctionDefinitionError{Name: f.Name, Msg: "a variadic function needs at least one parameter"}
	}
	for i, p := range f.Params {
		if p.Types == 0 {
			return &FunctionDefinitionError{Name: f.Name, Msg: fmt.Sprintf("parameter %d accepts no type", i+1)}
		}
	}
	return nil
}

// Option configures [Compile].
type Option func(*config) error

type config struct {
	fns         functionTable
	decodeLimit int // see WithDecodeLimit
}

// defaultDecodeLimit is the decode limit of an expression compiled
// without WithDecodeLimit (see the package documentation).
const defaultDecodeLimit = 16 << 20

// WithDecodeLimit sets the expression's decode limit to n bytes: the
// budget of each of its searches, from which all that the search decodes
// is spent, counted at the memory it takes (see the package
// documentation); a search that would go past it fails with an
// [*InvalidValueError] wrapping a [*TooLargeError]. The default, 16 MiB,
// holds every AWS event payload read through a path; lower it to bound
// what a search may allocate. Compile fails with an [*InvalidValueError]
// if n is not above 0.
func WithDecodeLimit(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return &InvalidValueError{Msg: fmt.Sprintf("WithDecodeLimit(%d): the limit must be above 0", n)}
		}
		c.decodeLimit = n
		return nil
	}
}

// WithFunctions makes fns callable from the expression, in addition to the
// built-in and Powertools functions. A function with the name of a built-in
// one replaces it. Compile fails with a [*FunctionDefinitionError] if a
// function is malformed.
func WithFunctions(fns ...Function) Option {
	return func(c *config) error {
		for i := range fns {
			f := fns[i] // a copy: the caller may reuse its slice
			if err := f.validate(); err != nil {
				return err
			}
			f.builtin = false
			f.Params = append([]Param(nil), f.Params...)
			if c.fns.custom == nil {
				c.fns.custom = map[string]*Function{}
			}
			c.fns.custom[f.Name] = &f
		}
		return nil
	}
}

type functionTable struct {
	custom map[string]*Function
}

func (t *functionTable) lookup(name string) *Function {
	if f, ok := t.custom[name]; ok {
		return f
	}
	return builtins[name]
}

// call checks the arguments' types and runs the function, within the
// search's budget b.
func call(f *Function, args []any, b *strictjson.Budget) (any, error) {
	for i, a := range args {
		p := f.Params[min(i, len(f.Params)-1)]
		if !p.Types.accepts(a) {
			return nil, &InvalidTypeError{Function: f.Name, Arg: i, Want: p.Types, Got: typeName(a)}
		}
	}
	switch {
	case f.decode != nil:
		return f.decode(args, b)
	case f.builtin:
		return f.Call(args)
	}
	return callUser(f, args)
}

// userPanic carries a panic out of a user's function through the boundary
// guard, which re-panics with the original value.
type userPanic struct{ v any }

func callUser(f *Function, args []any) (any, error) {
	defer func() {
		if r := recover(); r != nil {
			panic(&userPanic{r})
		}
	}()
	return f.Call(args)
}

func (t ArgType) accepts(v any) bool {
	switch v := v.(type) {
	case nil:
		return t&TypeNull != 0
	case bool:
		return t&TypeBoolean != 0
	case float64, json.Number:
		return t&TypeNumber != 0
	case string:
		return t&TypeString != 0
	case map[string]any:
		return t&TypeObject != 0
	case *ExpRef:
		return t&TypeExpRef != 0
	case []any:
		if t&TypeArray != 0 {
			return true
		}
		if t&TypeArrayNumber != 0 && allOf(v, isNumber) {
			return true
		}
		return t&TypeArrayString != 0 && allOf(v, isString)
	}
	return false
}

func allOf(a []any, pred func(any) bool) bool {
	for _, v := range a {
		if !pred(v) {
			return false
		}
	}
	return true
}
