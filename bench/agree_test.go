package bench

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEnginesAgree checks that the benchmarks compare like with like: on
// every benchmark case both engines return the same value.
func TestEnginesAgree(t *testing.T) {
	run := func(t *testing.T, c benchCase) {
		ours := mustCompileOurs(t, c.ours)
		theirs := mustCompileTheirs(t, c.theirs)
		want, err := theirs.search(c.doc)
		if err != nil {
			t.Fatalf("go-jmespath: %v", err)
		}
		got, err := ours.Search(c.doc)
		if err != nil {
			t.Fatalf("Search: %v", err)
		}
		if diff := cmp.Diff(numbersAsFloats(want), numbersAsFloats(got)); diff != "" {
			t.Errorf("Search(%q) differs from go-jmespath %q (-go-jmespath +ours):\n%s", c.ours, c.theirs, diff)
		}
		if c.raw == nil {
			return
		}
		got, err = ours.SearchJSON(c.raw)
		if err != nil {
			t.Fatalf("SearchJSON: %v", err)
		}
		if diff := cmp.Diff(numbersAsFloats(want), numbersAsFloats(got)); diff != "" {
			t.Errorf("SearchJSON(%q) differs from go-jmespath %q (-go-jmespath +ours):\n%s", c.ours, c.theirs, diff)
		}
	}
	for _, c := range lambdaCases(t) {
		t.Run(c.name, func(t *testing.T) { run(t, c) })
	}
	t.Run("compliance", func(t *testing.T) {
		cases, err := complianceCases()
		if err != nil {
			skipWithoutCompliance(t, err)
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) { run(t, c) })
		}
	})
}

// numbersAsFloats turns json.Number, which SearchJSON returns, into the
// float64 that go-jmespath works with, so values compare by value.
func numbersAsFloats(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return v
		}
		return f
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = numbersAsFloats(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = numbersAsFloats(e)
		}
		return out
	}
	return v
}
