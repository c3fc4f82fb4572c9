package jmespath

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestOpenQuote checks openQuote on strings built from pieces that put
// escaped quotes and backslashes at every offset of a word, before text
// that may itself end in a backslash.
func TestOpenQuote(t *testing.T) {
	pieces := []string{"a", `\"`, `\\`, `\n`, "é", `\u0022`, "0123456", `\\\"`}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 5000; n++ {
		var sb strings.Builder
		for range rng.IntN(12) {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		contents := sb.String()
		for _, before := range []string{`{"k":`, `["x\\",`, `[1,`, "{\"k\" :\n  "} {
			doc := before + `"` + contents + `"]`
			q := len(doc) - 2
			start, escaped := openQuote([]byte(doc), 0, q)
			if start != len(before) || escaped != strings.Contains(contents, `\`) {
				t.Fatalf("openQuote(%q, 0, %d) = %d, %v; want %d, %v", doc, q, start, escaped, len(before), strings.Contains(contents, `\`))
			}
		}
	}
}
