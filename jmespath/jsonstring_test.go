package jmespath

import (
	"strings"
	"testing"
)

// A JSON document quoted in a string, the way unescapeRun's two-escape step
// (\":\" and \",\") and appendString's copy of a string's last bytes see
// it: at every offset in a word, cut short anywhere, and with the bytes
// around the separators changed to ones the step must not take.
func TestAppendStringQuotedDocument(t *testing.T) {
	docs := []string{
		string(compactBody[1:]),
		`{\"a\":\"b\",\"c\":\"d\"}"`,
		`\":\"\",\"\":\"\"`,
		`\":\"\":\"\",\",\"`,
		`x\";\"y\"\"z\",,\"`,
		`\":\\\",\"\\\":\"\\"`,
		`\":\n\",\t\"`,
		`\":\u0022\"\u003a\"`,
		`\"` + "\x00" + `\"\":` + "\x1f" + `\"`,
		`\":\"é\",\"` + "\xff" + `\"`,
		`\":\"\",\` + `"`,
		`\":\x\",\"`,
	}
	for _, doc := range docs {
		for pad := 0; pad < 12; pad++ {
			s := strings.Repeat("p", pad) + doc
			for end := 0; end <= len(s); end++ {
				// The string ends its buffer, as a body does for
				// SearchValidJSON, or is followed by more bytes.
				checkScanners(t, []byte(s[:end]))
				checkScanners(t, []byte(s[:end]+`"}`+strings.Repeat(" ", 16)))
			}
		}
	}
}

// A string decoded into a buffer with little spare capacity grows it, at
// any length.
func TestAppendStringGrows(t *testing.T) {
	for n := 0; n < 100; n++ {
		b := []byte(strings.Repeat(`ab\":\"`, n) + `"`)
		want := strings.Repeat(`ab":"`, n)
		for spare := 0; spare < 20; spare++ {
			got, end := appendString(make([]byte, 1, 1+spare), b, 0)
			if end != len(b) || string(got[1:]) != want {
				t.Fatalf("appendString(%q) with %d spare bytes = %q, %d; want %q, %d", b, spare, got[1:], end, want, len(b))
			}
		}
	}
}
