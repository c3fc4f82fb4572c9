package jmespath

import (
	"errors"
	"strings"
	"testing"
)

func TestSyntaxErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr   string
		offset int
	}{
		{"foo.", 4},
		{"foo[", 4},
		{"a = b", 2},
		{`"abc`, 0},
		{"'abc", 0},
		{"`\"abc`", 0},
		{"`abc", 0},
		{"foo |", 5},
		{"foo[1:2:3:4]", 9},
		{"foo[1 2]", 6},
		{"abs(1)", 4},
		{`"foo"(1)`, 0},
		{"@(a)", 1},
		{"foo bar", 4},
		{"-", 0},
		{"a[99999999999999999999]", 2},
		{"a[?b", 4},
		{"{a: b", 5},
		{"{a b}", 3},
		{"[a b]", 3},
		{"f(a b)", 4},
		{"{}", 1},
		{"a.@", 2},
		{"a #", 2},
		{"é", 0},
		{"", 0},
		{"a[?b]c", 5},
		{strings.Repeat("(", 300) + "a" + strings.Repeat(")", 300), 256},
		{strings.Repeat("!", 1000) + "a", 256},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := Compile(tt.expr)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%q) error = %v, want *SyntaxError", tt.expr, err)
			}
			if se.Offset != tt.offset || se.Expression != tt.expr || se.Msg == "" {
				t.Errorf("Compile(%q) = offset %d msg %q, want offset %d", tt.expr, se.Offset, se.Msg, tt.offset)
			}
		})
	}
}

// Deep trees are refused even when the parser does not recurse to build
// them, and long flat paths are not.
func TestNestingLimit(t *testing.T) {
	t.Parallel()
	if _, err := Compile(strings.Repeat("a|", 300) + "a"); err == nil {
		t.Error("300 pipes: want a syntax error")
	}
	if _, err := Compile(strings.Repeat("a.", 10000) + "a"); err != nil {
		t.Errorf("long flat path: %v", err)
	}
	if _, err := Compile(strings.Repeat("a|", 200) + "a"); err != nil {
		t.Errorf("200 pipes: %v", err)
	}
	if _, err := Compile("[" + strings.Repeat("a, ", 10000) + "a]"); err != nil {
		t.Errorf("long list: %v", err)
	}
	if _, err := Compile(strings.Repeat("not_null(", 300) + "a" + strings.Repeat(")", 300)); err == nil {
		t.Error("300 nested calls: want a syntax error")
	}
	if _, err := Compile(strings.Repeat("a[*].", 300) + "a"); err == nil {
		t.Error("300 nested projections: want a syntax error")
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr  string
		check func(t *testing.T, err error)
	}{
		{"nope(@)", func(t *testing.T, err error) {
			var e *UnknownFunctionError
			if !errors.As(err, &e) || e.Name != "nope" || e.Offset != 0 || e.Expression != "nope(@)" {
				t.Errorf("got %#v", err)
			}
		}},
		{"foo.nope(@)", func(t *testing.T, err error) {
			var e *UnknownFunctionError
			if !errors.As(err, &e) || e.Offset != 4 {
				t.Errorf("got %#v", err)
			}
		}},
		{"abs(@, @)", func(t *testing.T, err error) {
			var e *ArityError
			if !errors.As(err, &e) || e.Function != "abs" || e.Min != 1 || e.Max != 1 || e.Got != 2 {
				t.Errorf("got %#v", err)
			}
		}},
		{"merge()", func(t *testing.T, err error) {
			var e *ArityError
			if !errors.As(err, &e) || e.Min != 1 || e.Max != -1 || e.Got != 0 {
				t.Errorf("got %#v", err)
			}
		}},
		{"foo[::0]", func(t *testing.T, err error) {
			var e *InvalidValueError
			if !errors.As(err, &e) {
				t.Errorf("got %#v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := Compile(tt.expr)
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() == "" {
				t.Error("empty message")
			}
			tt.check(t, err)
		})
	}
}

func TestSearchErrors(t *testing.T) {
	t.Parallel()
	data := map[string]any{"s": "x", "n": 1.0, "people": []any{
		map[string]any{"age": 1.0}, map[string]any{"age": "two"},
	}}
	tests := []struct {
		expr string
		fn   string
		arg  int
		want ArgType
		got  string
	}{
		{"abs(s)", "abs", 0, TypeNumber, "string"},
		{"length(n)", "length", 0, TypeString | TypeArray | TypeObject, "number"},
		{"max(people)", "max", 0, TypeArrayNumber | TypeArrayString, "array"},
		{"sort_by(people, &age)", "sort_by", 1, TypeNumber, "string"},
		{"max_by(people, &missing)", "max_by", 1, TypeNumber | TypeString, "null"},
		{"merge(s)", "merge", 0, TypeObject, "string"},
		{"not_null(&s)", "not_null", 0, TypeAny, "expref"},
		{"&s", "&", 0, TypeAny, "expref"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := MustCompile(tt.expr).Search(data)
			var e *InvalidTypeError
			if !errors.As(err, &e) {
				t.Fatalf("error = %v, want *InvalidTypeError", err)
			}
			if e.Function != tt.fn || e.Arg != tt.arg || e.Want != tt.want || e.Got != tt.got {
				t.Errorf("got %+v, want {%s %d %v %s}", *e, tt.fn, tt.arg, tt.want, tt.got)
			}
			if e.Error() == "" {
				t.Error("empty message")
			}
		})
	}
}

func TestMustCompilePanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if _, ok := recover().(*SyntaxError); !ok {
			t.Error("MustCompile of a bad expression did not panic with *SyntaxError")
		}
	}()
	MustCompile("a.")
}

// TestHyphenatedNameHint checks that the syntax error of a name with a
// hyphen, which JMESPath reads as a minus, says how to write it.
func TestHyphenatedNameHint(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, hint string }{
		{"headers.idempotency-key", `headers."idempotency-key"`},
		{"requestContext.request-id.x", `requestContext."request-id".x`},
		{"x-api-key", `"x-api-key"`},
		{"a[-]", ""},
		{"a - 1", ""},
	}
	for _, tc := range tests {
		_, err := Compile(tc.expr)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("Compile(%q) = %v, want a *SyntaxError", tc.expr, err)
		}
		if got := strings.Contains(se.Msg, "must be quoted: "+tc.hint); got != (tc.hint != "") {
			t.Errorf("Compile(%q): %q, want the hint %q", tc.expr, se.Msg, tc.hint)
		}
		if tc.hint != "" {
			if _, err := Compile(tc.hint); err != nil {
				t.Errorf("the hint %q does not compile: %v", tc.hint, err)
			}
		}
	}
}
