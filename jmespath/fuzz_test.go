package jmespath

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/gopowertools/lambda/internal/strictjson"
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
	`{"Records":[{"kinesis":{"data":"eyJvcmRlcl9pZCI6ImEifQ=="}},{"kinesis":{"data":"H4sIAAAAAAACA6tWyi9KSS2Kz0xRslJKUqoFAMf84sUQAAAA"}},{"kinesis":{}}]}`,
}

var fuzzExpressions = []string{
	"requestContext.requestId", "powertools_json(body).order_id", `headers."x-idem"`,
	"Records[0].body", "powertools_json(Records[0].body).a", "a.b", "a", "@", "[1][1][0]",
	"powertools_json(body)", "powertools_json(@)", "key", "key2", "[2].x",
	"powertools_json(body).[order_id, x]", "a.[b, powertools_json(c).d]", "Records[0].[body, messageId]",
	"powertools_json(body).[amount,currency]", "powertools_json(body).x[*].a",
	"Records[*].messageId", "Records[*].powertools_json(body).a", "Records[*].powertools_json(powertools_base64(kinesis.data)).order_id",
	"Records[*].powertools_json(powertools_base64_gzip(kinesis.data)).order_id", "powertools_base64(Records[0].kinesis.data)",
	"[requestContext.requestId, powertools_json(body).order_id]", "{r: requestContext.requestId, k: headers.\"x-idem\"}", "[*][*]",
	"(Records[*].kinesis)[*].data", "(Records[*].body)[0]",
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

// FuzzSearchJSON checks SearchJSON against Search (checkAgreement) on
// the fuzzer's expressions and documents.
func FuzzSearchJSON(f *testing.F) {
	seedSearches(f)
	f.Fuzz(func(t *testing.T, expr string, doc []byte) {
		e, err := Compile(expr)
		if err != nil {
			return
		}
		checkAgreement(t, e, doc)
	})
}

// ambiguous reports whether err is a refusal of text that encoding/json
// could read two ways: member names, or text that is not Unicode.
func ambiguous(err error) bool {
	var dup *strictjson.DuplicateNameError
	var text *strictjson.InvalidTextError
	return errors.As(err, &dup) || errors.As(err, &text)
}

// decodeStd decodes raw as the reference does: encoding/json with
// UseNumber, refusing trailing data.
func decodeStd(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}
