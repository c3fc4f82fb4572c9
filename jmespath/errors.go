package jmespath

import (
	"fmt"
	"strings"
)

// SyntaxError reports an expression that does not parse. Offset is the byte
// offset in Expression where the problem was found.
type SyntaxError struct {
	Expression string
	Offset     int
	Msg        string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("jmespath: syntax error at offset %d of %q: %s", e.Offset, e.Expression, e.Msg)
}

// UnknownFunctionError reports a call of a function that is neither built in
// nor registered with [WithFunctions]. It is returned by [Compile].
type UnknownFunctionError struct {
	Expression string
	Offset     int // byte offset of the function name
	Name       string
}

func (e *UnknownFunctionError) Error() string {
	return fmt.Sprintf("jmespath: unknown function %s() at offset %d of %q", e.Name, e.Offset, e.Expression)
}

// ArityError reports a function called with the wrong number of arguments.
// It is returned by [Compile]. Max is -1 for a variadic function.
type ArityError struct {
	Expression string
	Offset     int // byte offset of the function name
	Function   string
	Min, Max   int
	Got        int
}

func (e *ArityError) Error() string {
	want := fmt.Sprintf("%d", e.Min)
	switch {
	case e.Max < 0:
		want = fmt.Sprintf("at least %d", e.Min)
	case e.Max != e.Min:
		want = fmt.Sprintf("%d to %d", e.Min, e.Max)
	}
	return fmt.Sprintf("jmespath: %s() takes %s argument(s), got %d (offset %d of %q)",
		e.Function, want, e.Got, e.Offset, e.Expression)
}

// InvalidTypeError reports, at search time, a value of a type that a
// function does not accept. Arg is the 0-based argument index; Want lists
// the accepted types; Got is the JMESPath type name of the value ("number",
// "string", "boolean", "array", "object", "null", "expref"), or the Go type
// for a value outside the data model.
type InvalidTypeError struct {
	Function string
	Arg      int
	Want     ArgType
	Got      string
}

func (e *InvalidTypeError) Error() string {
	return fmt.Sprintf("jmespath: %s() argument %d: want %s, got %s", e.Function, e.Arg+1, e.Want, e.Got)
}

// InvalidValueError reports a value of the right type that an operation
// cannot use: a zero slice step, text that is not JSON, base64 or gzip, bytes
// that are not UTF-8. Err, when set, is the underlying error.
type InvalidValueError struct {
	Function string // empty for a non-function operation such as a slice
	Msg      string
	Err      error
}

func (e *InvalidValueError) Error() string {
	var b strings.Builder
	b.WriteString("jmespath: ")
	if e.Function != "" {
		b.WriteString(e.Function)
		b.WriteString("(): ")
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *InvalidValueError) Unwrap() error { return e.Err }

// TooLargeError is the cause, inside an [*InvalidValueError], of the
// refusal of a search that would go past its budget, the expression's
// decode limit (see [WithDecodeLimit]): Limit is that limit, and the
// search needed Size bytes or more by then. Function is the Powertools
// function that was decoding (powertools_json for a value built from a
// document it decodes), or empty for the values the search builds from
// the raw bytes, its lists and its objects.
type TooLargeError struct {
	Function string
	Limit    int
	Size     int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%d bytes or more, over the decode limit of %d", e.Size, e.Limit)
}

// internalError wraps a panic caught at the API boundary. It should never be
// seen; if it is, it is a bug in this package.
type internalError struct{ v any }

func (e *internalError) Error() string { return fmt.Sprintf("jmespath: internal error: %v", e.v) }
