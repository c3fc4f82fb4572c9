package jmespath

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Behaviours of jmespath.py that the compliance suite does not pin.
func TestBuiltinEdges(t *testing.T) {
	t.Parallel()
	data := map[string]any{
		"objs":  map[string]any{"b": 2.0, "a": 1.0, "c": 3.0},
		"names": []any{"bob", "Al", "al", "émile"},
		"ppl":   []any{map[string]any{"n": "x", "a": 2.0}, map[string]any{"n": "y", "a": 1.0}, map[string]any{"n": "z", "a": 2.0}},
	}
	tests := []struct {
		expr string
		want any
	}{
		{"to_number(' 42 ')", json.Number("42")},
		{"to_number('+7')", json.Number("7")},
		{"to_number('007')", json.Number("7")},
		{"to_number('-.5')", json.Number("-0.5")},
		{"to_number('5.')", json.Number("5")},
		{"to_number('1E+05')", json.Number("1E+05")},
		{"to_number('12345678901234567890123')", json.Number("12345678901234567890123")},
		{"to_number('1e')", nil},
		{"to_number('.')", nil},
		{"to_number('1_000')", nil},
		{"to_number('nan')", nil},
		{"to_number('')", nil},
		{"'a' < 'b'", true},
		{"'b' <= 'a'", false},
		{"'é' > 'z'", true},
		{"'1' < `2`", nil},
		{"`true` < `false`", nil},
		{"names[?@ > 'al']", []any{"bob", "émile"}},
		{"keys(objs)", []any{"a", "b", "c"}},
		{"values(objs)", []any{1.0, 2.0, 3.0}},
		{"objs.*", []any{1.0, 2.0, 3.0}},
		{"max_by(ppl, &a).n", "x"},
		{"min_by(ppl, &a).n", "y"},
		{"sort_by(ppl, &a)[*].n", []any{"y", "x", "z"}},
		{"sort(names)", []any{"Al", "al", "bob", "émile"}},
		{"reverse('aé')", "éa"},
		{"length('é')", 1.0},
		{"contains('abc', `1`)", false},
		{"to_string(`{\"b\": \"<&>\", \"a\": 1.5}`)", `{"a":1.5,"b":"<&>"}`},
		{"!`0`", false},
		{"not_null(`null`, `[]`, 'x')", []any{}},
		{"map(&a, ppl)", []any{2.0, 1.0, 2.0}},
		{"map(&missing, ppl)", []any{nil, nil, nil}},
		{"ppl[0:3:2].n", []any{"x", "z"}},
		{"ppl[-1:0:-9223372036854775807].n", []any{"z"}},
		{"ppl[9223372036854775807:].n", []any{}},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := MustCompile(tt.expr).Search(data)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("= %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
}
