package jmespath

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// fuzzEvents are documents shaped like Lambda events, for the scanner.
var fuzzEvents = []string{
	`{"body":"{\"order_id\":12345678901234567890,\"x\":[1,2]}","headers":{"x-idem":"k1"},"requestContext":{"requestId":"r-1"}}`,
	`{"Records":[{"body":"{\"a\":\"\\u00e9\"}","messageId":"m1"},{"body":"2"}]}`,
	`{"a":1,"a":{"b":"dup"}}`,
	`{"k\u0065y":"escaped key","key2":"\ud83d\ude00"}`,
	`[0,[1,[2,[3]]],{"x":-0.5e+3}]`,
	`{"body":"not json"}`,
	`{"body":"e30="}`,
	` "just a string" `,
}

var fuzzExpressions = []string{
	"requestContext.requestId", "powertools_json(body).order_id", `headers."x-idem"`,
	"Records[0].body", "powertools_json(Records[0].body).a", "a.b", "a", "@", "[1][1][0]",
	"powertools_json(body)", "powertools_json(@)", "key", "key2", "[2].x",
}

func seedFromCompliance(f *testing.F, add func(c namedCase)) {
	for _, c := range loadCompliance(f) {
		add(c)
	}
}

// checkErrorType fails on an error that is not one of the package's
// documented kinds, in particular on a recovered internal panic.
func checkErrorType(t *testing.T, err error) {
	t.Helper()
	var ie *internalError
	if errors.As(err, &ie) {
		t.Fatalf("internal error: %v", err)
	}
}

func FuzzCompile(f *testing.F) {
	seedFromCompliance(f, func(c namedCase) { f.Add(c.Expression) })
	for _, e := range fuzzExpressions {
		f.Add(e)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		e, err := Compile(expr)
		if err != nil {
			checkErrorType(t, err)
			var se *SyntaxError
			if errors.As(err, &se) && (se.Offset < 0 || se.Offset > len(expr)) {
				t.Fatalf("offset %d outside %q", se.Offset, expr)
			}
			return
		}
		if e.String() != expr {
			t.Fatalf("String() = %q, want %q", e.String(), expr)
		}
	})
}

func FuzzSearch(f *testing.F) {
	seedFromCompliance(f, func(c namedCase) { f.Add(c.Expression, []byte(c.given)) })
	for i, e := range fuzzExpressions {
		f.Add(e, []byte(fuzzEvents[i%len(fuzzEvents)]))
	}
	f.Fuzz(func(t *testing.T, expr string, doc []byte) {
		e, err := Compile(expr)
		if err != nil {
			return
		}
		for _, useNumber := range []bool{false, true} {
			d := json.NewDecoder(bytes.NewReader(doc))
			if useNumber {
				d.UseNumber()
			}
			var data any
			if d.Decode(&data) != nil {
				return
			}
			_, err := e.Search(data)
			checkErrorType(t, err)
		}
	})
}

// seedSearches seeds a fuzz target taking an expression and a document
// with the compliance cases and every pair of fuzzExpressions and
// fuzzEvents.
func seedSearches(f *testing.F) {
	seedFromCompliance(f, func(c namedCase) { f.Add(c.Expression, []byte(c.given)) })
	for _, e := range fuzzExpressions {
		for _, d := range fuzzEvents {
			f.Add(e, []byte(d))
		}
	}
}

func FuzzSearchJSON(f *testing.F) {
	seedSearches(f)
	f.Fuzz(func(t *testing.T, expr string, doc []byte) {
		e, err := Compile(expr)
		if err != nil {
			return
		}
		got, gotErr := e.SearchJSON(doc)
		checkErrorType(t, gotErr)
		data, refErr := decodeStd(doc)
		if refErr != nil {
			if gotErr == nil {
				t.Fatalf("SearchJSON(%q) on invalid JSON %q = %#v, want an error (%v)", expr, doc, got, refErr)
			}
			return
		}
		want, wantErr := e.Search(data)
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("%q on %q: SearchJSON error %v, Search error %v", expr, doc, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q on %q: SearchJSON = %#v, Search = %#v", expr, doc, got, want)
		}
	})
}

// FuzzSearchValidJSON checks SearchValidJSON against SearchJSON on valid
// documents, and on any input that it neither panics nor hangs, and that
// ValidJSON agrees with json.Valid.
func FuzzSearchValidJSON(f *testing.F) {
	seedSearches(f)
	f.Add("body", apiEvent)
	f.Add("a", []byte(`{"a":"x\\","b":"\\\"","a":{"c":["}",{"d":"{"}]}}`))
	f.Fuzz(func(t *testing.T, expr string, doc []byte) {
		e, err := Compile(expr)
		if err != nil {
			return
		}
		got, gotErr := e.SearchValidJSON(doc)
		checkErrorType(t, gotErr)
		valid := json.Valid(doc)
		if ValidJSON(doc) != valid {
			t.Fatalf("ValidJSON(%q) = %v, json.Valid = %v", doc, !valid, valid)
		}
		if !valid {
			return
		}
		want, wantErr := e.SearchJSON(doc)
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("%q on %q: SearchValidJSON error %v, SearchJSON error %v", expr, doc, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q on %q: SearchValidJSON = %#v, SearchJSON = %#v", expr, doc, got, want)
		}
	})
}

// FuzzDecode checks this package's JSON reader against encoding/json: the
// same documents valid, the same values decoded.
func FuzzDecode(f *testing.F) {
	for _, d := range fuzzEvents {
		f.Add([]byte(d))
	}
	f.Add(apiEvent)
	for _, d := range []string{`1e999`, `-0.0E-0`, `"\ud800\udc00\ud800x"`, "\"\xed\xa0\x80\"", `{"a":1,"a":[]}`, `[]`, ` { } `, `tru`, `"\u00"`} {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, ok := parseJSON(doc)
		want, err := decodeStd(doc)
		if ok != (err == nil) {
			t.Fatalf("%q: parseJSON ok=%v, encoding/json error %v", doc, ok, err)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: parseJSON = %#v, encoding/json = %#v", doc, got, want)
		}
	})
}
