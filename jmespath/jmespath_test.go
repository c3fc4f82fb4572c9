package jmespath

import "testing"

func TestMultiSelect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want bool
	}{
		{"[a, b]", true},
		{"{x: a, y: b}", true},
		{"foo.[a, b]", true},
		{"foo.{x: a}", true},
		{"@ | [a, b]", true},
		{"a", false},
		{"@", false},
		{"[a, b] | [0]", false},
		{"foo[*].[a, b]", false}, // a projection: its members are lists
		{"[a, b][0]", false},
	}
	for _, tt := range tests {
		if got := MustCompile(tt.expr).MultiSelect(); got != tt.want {
			t.Errorf("Compile(%q).MultiSelect() = %v, want %v", tt.expr, got, tt.want)
		}
	}
}
