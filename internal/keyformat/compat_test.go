package keyformat

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The expected texts below are what Python 3.11's json.dumps(...,
// sort_keys=True) and Node.js 20's JSON.stringify(deepSort(...)) write for
// json.loads and JSON.parse of the input; internal/testing/interop checks many
// more against the real runtimes.

func TestPythonJSON(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`1`, `1`},
		{`-0`, `0`},
		{`123456789012345678901234567890`, `123456789012345678901234567890`},
		{`1.0`, `1.0`},
		{`-0.0`, `-0.0`},
		{`1e2`, `100.0`},
		{`1E+2`, `100.0`},
		{`1e15`, `1000000000000000.0`},
		{`1e16`, `1e+16`},
		{`12345678901234567000.0`, `1.2345678901234567e+19`},
		{`0.0001`, `0.0001`},
		{`1e-5`, `1e-05`},
		{`1.5e300`, `1.5e+300`},
		{`5e-324`, `5e-324`},
		{`0.1`, `0.1`},
		{`"é😀\u007f/\"\\\n\u2028\u0001<&>"`, `"\u00e9\ud83d\ude00\u007f/\"\\\n\u2028\u0001<&>"`},
		{`{"b":[1,{"d":null,"c":true}],"a":"x","é":{},"Z":[]}`, `{"Z": [], "a": "x", "b": [1, {"c": true, "d": null}], "\u00e9": {}}`},
	}
	for _, tc := range tests {
		v, err := decodeJSON([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := python.text(v)
		if err != nil || string(got) != tc.want {
			t.Errorf("Python text of %s = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	// json.loads refuses an integer of more than 4300 digits.
	if _, err := python.text(json.Number(strings.Repeat("9", 4301))); err == nil {
		t.Error("Python text of a 4301-digit integer succeeded")
	}
	if _, err := python.text(json.Number(strings.Repeat("9", 4300))); err != nil {
		t.Errorf("Python text of a 4300-digit integer: %v", err)
	}
}

func TestTypeScriptJSON(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`1`, `1`},
		{`-0`, `0`},
		{`-0.0`, `0`},
		{`1.0`, `1`},
		{`1.5`, `1.5`},
		{`12345678901234567000`, `12345678901234567000`},
		{`1e20`, `100000000000000000000`},
		{`1e21`, `1e+21`},
		{`1e-6`, `0.000001`},
		{`1e-7`, `1e-7`},
		{`123e-20`, `1.23e-18`},
		{`"é😀\u007f/\"\\\n\u2028\u0001<&>"`, "\"é😀\u007f/\\\"\\\\\\n\u2028\\u0001<&>\""},
		// Array indexes first, numerically; "4294967295" is not one; the
		// rest by lowercase, as UTF-16.
		{`{"b":1,"10":2,"2":3,"A":4,"a0":5,"4294967295":6,"4294967294":7}`, `{"2":3,"10":2,"4294967294":7,"4294967295":6,"A":4,"a0":5,"b":1}`},
		// İ lowercases to "i̇", a final Σ to ς.
		{`{"ΑΣ!":1,"ασ":2,"İ":3,"i!":4}`, `{"i!":4,"İ":3,"ΑΣ!":1,"ασ":2}`},
		// UTF-16 order: U+E000 after an astral character's surrogates.
		{`{"\ue000":1,"😀":2}`, `{"😀":2,"` + "\ue000" + `":1}`},
	}
	for _, tc := range tests {
		v, err := decodeJSON([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := typeScript.text(v)
		if err != nil || string(got) != tc.want {
			t.Errorf("TypeScript text of %s = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := typeScript.text(map[string]any{"İ": 1, "i\u0307": 2}); err == nil {
		t.Error("TypeScript text of two names with one lowercase form succeeded")
	}
}

var (
	python     = Format{Mode: Python}
	typeScript = Format{Mode: TypeScript}
)

// TestTypeScriptProto checks that a member named __proto__, which
// Powertools TypeScript leaves out of the text it hashes (deepSort's
// assignment sets the prototype), is refused, at any depth: two values
// that differ in it would share a hash.
func TestTypeScriptProto(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{`{"__proto__":1}`, `{"__proto__":2,"a":1}`, `{"a":[{"__proto__":{}}]}`} {
		v, err := decodeJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if d, err := typeScript.Digest(v); !errors.Is(err, errTypeScriptProto) {
			t.Errorf("TypeScript digest of %s = %q, %v; want a refusal of __proto__", doc, d, err)
		}
		// Another name is no member of Object.prototype's.
		if _, err := python.Digest(v); err != nil {
			t.Errorf("Python digest of %s: %v", doc, err)
		}
	}
}

// TestNotFiniteRefused checks that an infinity or NaN, which sum and avg
// reach (sum([1e308, 1e308])), is refused in every format: Python writes
// Infinity for all that overflow, TypeScript null for them and NaN, and
// encoding/json refuses them.
func TestNotFiniteRefused(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		for _, format := range []Format{{}, python, typeScript} {
			v := []any{"x", map[string]any{"sum": f}}
			d, err := format.Digest(v)
			if err == nil {
				t.Errorf("%v digest of %v = %q, want a refusal", format.Mode, f, d)
			}
			if e, ok := err.(*InexactError); format.Mode != Own && (!ok || e.Path != "[1].sum") {
				t.Errorf("%v digest of %v: %v; want an *InexactError at [1].sum", format.Mode, f, err)
			}
		}
	}
}

// TestInvalidTextRefused checks that a string that is not UTF-8, as a
// custom JMESPath function may return (an unhex of ff01 and of fe01), is
// refused in every format, as a value and as a member name, where each
// would write U+FFFD and the two would share a hash.
func TestInvalidTextRefused(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		"\xff\x01", "\xfe\x01",
		[]any{"ok", "a\xffb"},
		map[string]any{"id": "\xc3"},
		map[string]any{"\xff": 1},
	} {
		for _, format := range []Format{{}, python, typeScript} {
			d, err := format.Digest(v)
			if _, ok := err.(*InvalidTextError); !ok {
				t.Errorf("%v digest of %#v = %q, %v; want an *InvalidTextError", format.Mode, v, d, err)
			}
		}
	}
	// U+FFFD itself is text.
	for _, format := range []Format{{}, python, typeScript} {
		if _, err := format.Digest("\ufffd"); err != nil {
			t.Errorf("%v digest of U+FFFD: %v", format.Mode, err)
		}
	}
}

// The keys Powertools computed for these values (see the package's
// interop tests for how they are obtained).
func TestCompatibleKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		format Format
		prefix string
		value  string
		want   string
	}{
		{Format{Mode: Python}, "fn.__main__.lambda_handler", `"x"`, "fn.__main__.lambda_handler#3fbf839fa0e778a20326ddc34f5cd588"},
		// Powertools left out a member "__proto__":{"x":1}, which Go refuses.
		{Format{Mode: TypeScript}, "fn", `{"b":1,"10":2,"2":3,"A":4,"a0":5,"4294967295":6,"4294967294":7}`, "fn#0Pt7qZ62oi88FWzlUDXjHA=="},
		{Format{Mode: TypeScript}, "p", `"x"`, "p#P7+Dn6DneKIDJt3DT1zViA=="},
	}
	for _, tc := range tests {
		v, err := decodeJSON([]byte(tc.value))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tc.format.Key(tc.prefix, v); err != nil || got != tc.want {
			t.Errorf("%v key of %s = %q, %v; want %q", tc.format.Mode, tc.value, got, err, tc.want)
		}
	}
}

// exactDouble on the examples of its doc comment and the edges of the
// doubles. (Python mode does not ask it about integer text: ints are
// exact.)
func TestExactNumbers(t *testing.T) {
	t.Parallel()
	accepted := []string{
		`100`, `100.5`, `0.1`, `1e21`, `-0`, `-0.0`, `0e99999999999999999999`, `1.5e-7`,
		`9007199254740991`, `9007199254740992`, `-9007199254740992`, `12345678901234567000`,
		`0.30000000000000004`, `1e2`, `1E+2`, `100.0`, `100.000`, `0.000001`,
		`123456789012345`, `0.123456789012345`, `1.23456789012345e-300`, `9.99999999999999e307`,
		`1.7976931348623157e308`, `2.2250738585072014e-308`, `5e-324`, `1e-320`,
		`0.` + strings.Repeat("0", 400) + `1e401`, // 0.1
	}
	refused := []string{
		`100.00000000000000001`, `0.1000000000000000055511151231257827`, `1e400`, `2e400`, `-1e400`,
		`1e-400`, `2e-400`, `9007199254740993`, `-9007199254740993`, `12345678901234567890`,
		`1.23456789012345e-320`, `4.9406564584124654e-324`, `1e99999999999999999999`,
		`1.7976931348623159e308`, `0.12345678901234567890`,
	}
	for _, text := range accepted {
		if _, ok := exactDouble(text); !ok {
			t.Errorf("exactDouble(%s) refuses it", text)
		}
	}
	for _, text := range refused {
		if _, ok := exactDouble(text); ok {
			t.Errorf("exactDouble(%s) accepts it", text)
		}
	}
}

// exactByRat is exactDouble's rule computed the slow way, with exact
// rationals.
func exactByRat(t testing.TB, text string) bool {
	t.Helper()
	f, err := strconv.ParseFloat(text, 64)
	if math.IsInf(f, 0) || (err != nil && !errors.Is(err, strconv.ErrRange)) {
		return false
	}
	value, ok := new(big.Rat).SetString(text)
	if !ok {
		t.Fatalf("big.Rat cannot read %s", text)
	}
	shortest, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return value.Cmp(shortest) == 0
}

// exactDouble agrees with exact rationals on numbers near the edges of
// what a double holds, and accepts every float64 as strconv and
// encoding/json write it.
func TestExactDoubleAgainstRat(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		return string(b)
	}
	for range 20000 {
		// 1 to 20 significant digits, a point anywhere, an exponent that
		// reaches past the normal and the subnormal doubles.
		text := digits(1 + r.IntN(20))
		if p := r.IntN(len(text) + 1); p < len(text) {
			text = text[:p] + "." + text[p:]
			if p == 0 {
				text = "0" + text
			}
		}
		if text[0] == '0' && len(text) > 1 && text[1] != '.' {
			text = "1" + text
		}
		if r.IntN(2) == 0 {
			text += "e" + strconv.Itoa(r.IntN(700)-350)
		}
		if _, ok := exactDouble(text); ok != exactByRat(t, text) {
			t.Fatalf("exactDouble(%s) = %v, exact rationals say %v", text, ok, !ok)
		}
	}
	for range 20000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsInf(f, 0) || math.IsNaN(f) {
			continue
		}
		for _, text := range []string{strconv.FormatFloat(f, 'g', -1, 64), string(must(json.Marshal(f)))} {
			if _, ok := exactDouble(text); !ok {
				t.Fatalf("exactDouble(%s) refuses a float64's own text", text)
			}
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

func FuzzExactDouble(f *testing.F) {
	for _, s := range []string{`100.00000000000000001`, `9007199254740993`, `1e400`, `5e-324`, `-0.0`, `0.30000000000000004`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !jsonNumber.MatchString(text) || len(text) > 400 {
			return
		}
		if _, exp, ok := strings.Cut(strings.ToLower(text), "e"); ok && len(strings.TrimLeft(exp, "+-0")) > 4 {
			return // big.Rat would spend its time on 10^exp
		}
		if _, ok := exactDouble(text); ok != exactByRat(t, text) {
			t.Fatalf("exactDouble(%s) = %v, exact rationals say %v", text, ok, !ok)
		}
	})
}
