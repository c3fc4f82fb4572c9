package idempotency

import (
	"encoding/json"
	"testing"
)

func TestMissing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    any
		want bool
	}{
		{"null", nil, true},
		{"empty string", "", true},
		{"empty array", []any{}, true},
		{"empty object", map[string]any{}, true},
		{"array of nulls", []any{nil, nil}, true},
		{"zero", json.Number("0"), false},
		{"false", false, false},
		{"string", "x", false},
		{"array with a null", []any{nil, json.Number("1")}, true},
		{"array without nulls", []any{json.Number("0"), false}, false},
		{"object with a null", map[string]any{"a": nil}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := missing(tc.v, false); got != tc.want {
				t.Errorf("missing(%#v) = %v, want %v", tc.v, got, tc.want)
			}
		})
	}
	// From a multi-select hash, a null member is a path that selected
	// nothing.
	if !missing(map[string]any{"c": "C-1", "o": nil}, true) || missing(map[string]any{"c": "C-1"}, true) {
		t.Error("a multi-select hash: a null member is no key, none is a key")
	}
}
