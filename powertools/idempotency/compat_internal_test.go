package idempotency

import (
	"encoding/json"
	"strings"
	"testing"
)

// The expected texts below are what Python 3.11's json.dumps(...,
// sort_keys=True) and Node.js 20's JSON.stringify(deepSort(...)) write for
// json.loads and JSON.parse of the input; internal/interop checks many
// more against the real runtimes.

func TestPythonJSON(t *testing.T) {
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
		{`12345678901234567890.0`, `1.2345678901234567e+19`},
		{`0.0001`, `0.0001`},
		{`1e-5`, `1e-05`},
		{`1.5e300`, `1.5e+300`},
		{`5e-324`, `5e-324`},
		{`1e400`, `Infinity`},
		{`-1e400`, `-Infinity`},
		{`1e-400`, `0.0`},
		{`0.1`, `0.1`},
		{`"é😀\u007f/\"\\\n\u2028\u0001<&>"`, `"\u00e9\ud83d\ude00\u007f/\"\\\n\u2028\u0001<&>"`},
		{`{"b":[1,{"d":null,"c":true}],"a":"x","é":{},"Z":[]}`, `{"Z": [], "a": "x", "b": [1, {"c": true, "d": null}], "\u00e9": {}}`},
	}
	for _, tc := range tests {
		v, err := decodeJSON([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendPython(nil, v)
		if err != nil || string(got) != tc.want {
			t.Errorf("appendPython(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	// json.loads refuses an integer of more than 4300 digits.
	if _, err := appendPython(nil, json.Number(strings.Repeat("9", 4301))); err == nil {
		t.Error("appendPython of a 4301-digit integer succeeded")
	}
	if _, err := appendPython(nil, json.Number(strings.Repeat("9", 4300))); err != nil {
		t.Errorf("appendPython of a 4300-digit integer: %v", err)
	}
}

func TestTypeScriptJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`1`, `1`},
		{`-0`, `0`},
		{`-0.0`, `0`},
		{`1.0`, `1`},
		{`1.5`, `1.5`},
		{`12345678901234567890`, `12345678901234567000`},
		{`1e20`, `100000000000000000000`},
		{`1e21`, `1e+21`},
		{`1e-6`, `0.000001`},
		{`1e-7`, `1e-7`},
		{`123e-20`, `1.23e-18`},
		{`1e400`, `null`},
		{`"é😀\u007f/\"\\\n\u2028\u0001<&>"`, "\"é😀\u007f/\\\"\\\\\\n\u2028\\u0001<&>\""},
		// Array indexes first, numerically; "4294967295" is not one;
		// __proto__ dropped; the rest by lowercase, as UTF-16.
		{`{"b":1,"__proto__":{"x":1},"10":2,"2":3,"A":4,"a0":5,"4294967295":6,"4294967294":7}`, `{"2":3,"10":2,"4294967294":7,"4294967295":6,"A":4,"a0":5,"b":1}`},
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
		got, err := appendTypeScript(nil, v)
		if err != nil || string(got) != tc.want {
			t.Errorf("appendTypeScript(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := appendTypeScript(nil, map[string]any{"İ": 1, "i\u0307": 2}); err == nil {
		t.Error("appendTypeScript of two names with one lowercase form succeeded")
	}
}

// The keys Powertools computed for these values (see the package's
// interop tests for how they are obtained).
func TestCompatibleKeys(t *testing.T) {
	tests := []struct {
		format keyFormat
		prefix string
		value  string
		want   string
	}{
		{keyFormat{compat: PowertoolsPython}, "fn.__main__.lambda_handler", `"x"`, "fn.__main__.lambda_handler#3fbf839fa0e778a20326ddc34f5cd588"},
		{keyFormat{compat: PowertoolsTypeScript}, "fn", `{"b":1,"__proto__":{"x":1},"10":2,"2":3,"A":4,"a0":5,"4294967295":6,"4294967294":7}`, "fn#0Pt7qZ62oi88FWzlUDXjHA=="},
		{keyFormat{compat: PowertoolsTypeScript}, "p", `"x"`, "p#P7+Dn6DneKIDJt3DT1zViA=="},
	}
	for _, tc := range tests {
		v, err := decodeJSON([]byte(tc.value))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tc.format.key(tc.prefix, v); err != nil || got != tc.want {
			t.Errorf("%v key of %s = %q, %v; want %q", tc.format.compat, tc.value, got, err, tc.want)
		}
	}
}
