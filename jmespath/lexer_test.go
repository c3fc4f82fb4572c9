package jmespath

import (
	"errors"
	"reflect"
	"testing"
)

// Numbers are kept clamped to the int32 range; an index or slice bound
// beyond it must select what the written number would, and numbers beyond
// int64 are refused.
func TestNumbers(t *testing.T) {
	t.Parallel()
	doc := []any{1.0, 2.0, 3.0}
	tests := []struct {
		expr string
		want any
		err  bool
	}{
		{expr: "[0]", want: 1.0},
		{expr: "[-1]", want: 3.0},
		{expr: "[-3]", want: 1.0},
		{expr: "[-4]", want: nil},
		{expr: "[ -1 ]", want: 3.0}, // three tokens, not one tIndex
		{expr: "@[1]", want: 2.0},
		{expr: "[2147483647]", want: nil},
		{expr: "[2147483648]", want: nil},
		{expr: "[-2147483649]", want: nil},
		{expr: "[ 2147483648 ]", want: nil},
		{expr: "[9223372036854775807]", want: nil},
		{expr: "[-9223372036854775808]", want: nil},
		{expr: "[9223372036854775808]", err: true},
		{expr: "[-9223372036854775809]", err: true},
		{expr: "[99999999999999999999999]", err: true},
		{expr: "[0000000000000000000001]", want: 2.0},
		{expr: "[-00000000000000000009223372036854775808]", want: nil},
		{expr: "[999999999999999999]", want: nil},
		{expr: "[-999999999999999999]", want: nil},
		{expr: "[-]", err: true},
		{expr: "[1:9223372036854775807]", want: []any{2.0, 3.0}},
		{expr: "[-9223372036854775808:2]", want: []any{1.0, 2.0}},
		{expr: "[2147483648:]", want: []any{}},
		{expr: "[::2147483648]", want: []any{1.0}},
		{expr: "[::-9223372036854775808]", want: []any{3.0}},
		{expr: "[-1:-9223372036854775808:-1]", want: []any{3.0, 2.0, 1.0}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			e, err := Compile(tt.expr)
			if tt.err {
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("Compile(%q) = %v, want a *SyntaxError", tt.expr, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.expr, err)
			}
			got, err := e.Search(doc)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Search = %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
}

// "[n]" is one token; where a '[' starting a list was expected, the error
// is reported at the number, where a reader of the expression looks for it.
func TestIndexTokenErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		expr   string
		offset int
	}{
		{"a.[0]", 3},
		{"a. [0]", 4},
		{"a.[ 0 ]", 4},
		{"[0", 2},
		{"[9223372036854775808]", 1},
	} {
		_, err := Compile(tt.expr)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset != tt.offset {
			t.Errorf("Compile(%q) = %v, want a *SyntaxError at offset %d", tt.expr, err, tt.offset)
		}
	}
}
