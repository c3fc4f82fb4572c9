package jmespath

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// refStringEnd is stringEnd and scanString written byte by byte, the
// obvious way: the reference for the eight-byte steps.
func refStringEnd(b []byte, i int) (end int, plain bool) {
	start := i
	plain = true
	for i < len(b) {
		switch c := b[i]; {
		case c == '"':
			return i + 1, plain && utf8.Valid(b[start:i])
		case c == '\\':
			n := escapeLen(b, i)
			if n == 0 {
				return -1, false
			}
			plain = false
			i += n
		case c < ' ':
			return -1, false
		default:
			i++
		}
	}
	return -1, false
}

func refSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func checkScanners(t *testing.T, b []byte) {
	t.Helper()
	wantEnd, wantPlain := refStringEnd(b, 0)
	if got := stringEnd(b, 0); got != wantEnd {
		t.Fatalf("stringEnd(%q) = %d, want %d", b, got, wantEnd)
	}
	if got, plain := scanString(b, 0); got != wantEnd || got >= 0 && plain != wantPlain {
		t.Fatalf("scanString(%q) = %d, %v; want %d, %v", b, got, plain, wantEnd, wantPlain)
	}
	// The busiest loops take a quote at nextStop as the closing one.
	if k := nextStop(b, 0); k < len(b) && b[k] == '"' && k+1 != wantEnd {
		t.Fatalf("nextStop(%q) = %d at a quote, but the string ends at %d", b, k, wantEnd)
	}
	if got, want := space(b, 0), refSpace(b, 0); got != want {
		t.Fatalf("space(%q) = %d, want %d", b, got, want)
	}
	got, end := appendString([]byte("x"), b, 0)
	if end != wantEnd {
		t.Fatalf("appendString(%q) ends at %d, want %d", b, end, wantEnd)
	}
	if wantEnd >= 0 {
		want := []byte(mustUnquote(t, b[:wantEnd]))
		if !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("appendString(%q) = %q, want x%q", b, got, want)
		}
		if got := unescape(b[:wantEnd-1]); !bytes.Equal(got, want) {
			t.Fatalf("unescape(%q) = %q, want %q", b[:wantEnd-1], got, want)
		}
	}
}

func mustUnquote(t testing.TB, contents []byte) string {
	t.Helper()
	v, err := decodeStd(append([]byte{'"'}, contents...))
	if err != nil {
		t.Fatalf("reference decode of %q: %v", contents, err)
	}
	return v.(string)
}

// The eight- and sixteen-byte steps must find the first stop byte wherever
// it falls in a word, also when a second one follows it (a borrow from the
// first can mark the byte above it).
func TestScannersStopPositions(t *testing.T) {
	stops := []string{`"`, `\n`, `\"`, `\u00e9`, `\ud83d\ude00`, `\ud83d\u00e9`, `\ud83d`, `\u12`, `\x`, "\x00", "\x1f", "\x7f", "\x80", "\xff", "é", " ", "\t", "\n", "!"}
	for n := 0; n < 40; n++ {
		for _, first := range stops {
			for _, second := range stops {
				for gap := 0; gap < 3; gap++ {
					b := []byte(strings.Repeat("a", n) + first + strings.Repeat(" ", gap) + second + `"` + strings.Repeat("b", 20))
					checkScanners(t, b)
					b = []byte(strings.Repeat(" ", n) + first + strings.Repeat(" ", gap) + second)
					checkScanners(t, b)
					// A word or more of plain bytes between two stops.
					b = []byte(first + strings.Repeat("a", n) + second + `"` + strings.Repeat("b", gap*4))
					checkScanners(t, b)
				}
			}
		}
	}
}

func FuzzScanners(f *testing.F) {
	for _, s := range []string{`abc"`, `a\"b\\c\u0041"`, "\x01\"", "é\xff\"", "   \n\t x", `\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkScanners(t, b) })
}

// The members of an object, as findField and nextField walk them: compact
// and indented, with duplicate keys (the last wins), escaped keys, every
// kind of value before and after the one selected, and in a string for
// powertools_json. Each search must agree with Search on the document
// encoding/json decodes, also when the document is invalid.
func TestFindFieldMembers(t *testing.T) {
	objects := []string{
		`{"a":1,"k":"v","b":[1,{"k":2}],"c":{"k":3},"d":true,"e":null,"f":-1.5e3}`,
		`{"k":1,"k":"two"}`,
		`{"k":{"k":1},"x":2,"k":{"k":3}}`,
		`{"\u006b":"escaped","kk":1,"k\"":2}`,
		`{"k":"first","\u006b":"escaped last"}`,
		"{\n  \"a\": 1,\n  \"k\": \"v\",\n  \"b\": [1, {\"k\": 2}]\n}",
		"{ \"a\" : 1 , \"k\" : [ 0 , 1 ] }",
		`{"k":1,}`, `{"k":1 "a":2}`, `{"a":1,"k":}`, `{"a""k":1}`, `{"a":1,"k":1`, `{"k":"\x"}`,
		`{"a":[1,2,],"k":1}`, `{"a":tru,"k":1}`, `{"a":01,"k":1}`, `{"k":1}}`,
		// Numbers, as numberEnd and fractionEnd cross them.
		`{"a":-0,"b":0.5e-3,"c":1E+2,"d":-12.75,"e":7e9,"k":[0,-1,2.5]}`,
		`{"a":1.,"k":1}`, `{"a":1e,"k":1}`, `{"a":1e+,"k":1}`, `{"a":-,"k":1}`, `{"a":.5,"k":1}`,
		`{"a":1.5e,"k":1}`, `{"a":-01,"k":1}`, `{"a":1x,"k":1}`, `{"k":-}`, `{"k":12`, `{"k":1.`,
	}
	exprs := []string{"k", "k.k", "k[1]", "missing", "b[1].k", "powertools_json(body).k", "powertools_json(body).k.k"}
	for _, obj := range objects {
		quoted, _ := json.Marshal(obj)
		for _, doc := range []string{obj, `{"body":` + string(quoted) + `}`} {
			data, decodeErr := decodeStd([]byte(doc))
			for _, expr := range exprs {
				e := MustCompile(expr)
				var want any
				var wantErr error = decodeErr
				if decodeErr == nil {
					want, wantErr = e.Search(data)
				}
				for _, search := range rawSearches(e) {
					if search.name != "SearchJSON" && decodeErr != nil {
						continue // the lax searches are unspecified on invalid JSON
					}
					got, gotErr := search.fn([]byte(doc))
					if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
						t.Errorf("%s on %q: %s = %#v, %v; want %#v, %v", expr, doc, search.name, got, gotErr, want, wantErr)
					}
				}
			}
		}
	}
}
