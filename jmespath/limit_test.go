package jmespath

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"testing"
)

func TestWithDecodeLimitInvalid(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, -1} {
		_, err := Compile("powertools_json(body)", WithDecodeLimit(n))
		var ve *InvalidValueError
		if !errors.As(err, &ve) {
			t.Errorf("Compile with WithDecodeLimit(%d): %v, want an *InvalidValueError", n, err)
		}
	}
}

// TestDecodeBudget finds, for each expression, the least decode limit at
// which each way of searching answers: what the expression decodes, at
// least its output, counts; one byte less is refused with a
// *TooLargeError of that limit, and the answer is the same at every
// limit.
func TestDecodeBudget(t *testing.T) {
	t.Parallel()
	b64 := base64.StdEncoding.EncodeToString
	doc := map[string]any{
		"json":    `{"a":1}`, // 7 bytes
		"b64":     b64([]byte("hello")),
		"b64nl":   "aGVs\nbG8=\r\n", // "hello", across lines
		"b64pad2": b64([]byte("hi")),
		"b64none": b64([]byte("abc")),
		"gz":      gzipBase64(t, []byte("hello world")),
		"docs":    []any{`{"a":1}`, `{"a":22}`},
		"list":    []any{1, 2, 3},
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expr string
		size int // the size of what it decodes, which must fit
		want any
	}{
		{"powertools_json(json).a", 7, mustDecode([]byte("1"))},
		{"powertools_json(json) | a", 7, mustDecode([]byte("1"))},
		{"powertools_json(json).[a]", 7, []any{mustDecode([]byte("1"))}},
		{"docs[*].powertools_json(@).a", 8, []any{mustDecode([]byte("1")), mustDecode([]byte("22"))}},
		{"powertools_base64(b64)", 5, "hello"},
		{"powertools_base64(b64nl)", 5, "hello"},
		{"powertools_base64(b64pad2)", 2, "hi"},
		{"powertools_base64(b64none)", 3, "abc"},
		{"powertools_base64_gzip(gz)", 11, "hello world"},
		{"list[*]", 24 + 3*16, []any{mustDecode([]byte("1")), mustDecode([]byte("2")), mustDecode([]byte("3"))}},
		{"[json, b64]", 24 + 2*16, []any{doc["json"], doc["b64"]}},
	} {
		for _, search := range []struct {
			name string
			fn   func(*Expression) (any, error)
		}{
			{"Search", func(e *Expression) (any, error) { return e.Search(mustDecode(raw)) }},
			{"SearchJSON", func(e *Expression) (any, error) { return e.SearchJSON(raw) }},
		} {
			t.Run(tc.expr+"/"+search.name, func(t *testing.T) {
				least := 0
				for limit := 1; limit < 1<<20 && least == 0; limit++ {
					e, err := Compile(tc.expr, WithDecodeLimit(limit))
					if err != nil {
						t.Fatal(err)
					}
					got, err := search.fn(e)
					var tl *TooLargeError
					switch {
					case err == nil:
						least = limit
						if !reflect.DeepEqual(got, tc.want) {
							t.Errorf("at %d: %#v, want %#v", limit, got, tc.want)
						}
					case !errors.As(err, &tl) || tl.Limit != limit || tl.Size <= limit:
						t.Fatalf("at %d: %v, want a *TooLargeError of that limit", limit, err)
					}
				}
				if least < tc.size {
					t.Errorf("answers within %d bytes, less than the %d it decodes", least, tc.size)
				}
				t.Logf("answers within %d bytes", least)
			})
		}
	}
}

// TestDecodeLimitAll checks that SearchJSONAll, reading one document for
// expressions of different limits, spends from one budget, the least of
// their limits, and names the expression whose reading ran out of it.
func TestDecodeLimitAll(t *testing.T) {
	t.Parallel()
	raw := []byte(`{"body":"{\"order_id\":\"A\"}"}`) // the key, "A", costs 17 bytes
	byDefault := MustCompile("powertools_json(body).order_id")
	tight, err := Compile("powertools_json(body).order_id", WithDecodeLimit(15))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := SearchJSONAll(raw, byDefault, byDefault); err != nil || !reflect.DeepEqual(got, []any{"A", "A"}) {
		t.Errorf("SearchJSONAll = %#v, %v", got, err)
	}
	for _, exprs := range [][]*Expression{{byDefault, tight}, {tight, byDefault}} {
		var tl *TooLargeError
		_, err := SearchJSONAll(raw, exprs...)
		xe, ok := err.(*ExpressionError)
		if !errors.As(err, &tl) || tl.Limit != 15 || tl.Size != 17 || !ok || xe.Expression != exprs[0] {
			t.Errorf("SearchJSONAll: %v, want an *ExpressionError of the first wrapping a *TooLargeError of limit 15", err)
		}
	}
	// Two expressions that each fit, and not both: the one whose value
	// is made last, the key, is refused. The key spends 17 bytes, the
	// document 361, both 378.
	key, err := Compile("powertools_json(body).order_id", WithDecodeLimit(370))
	if err != nil {
		t.Fatal(err)
	}
	other, err := Compile("powertools_json(body)", WithDecodeLimit(370))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []*Expression{key, other} {
		if _, err := e.SearchJSON(raw); err != nil {
			t.Fatalf("%s alone: %v", e, err)
		}
	}
	_, err = SearchJSONAll(raw, key, other)
	if xe, ok := err.(*ExpressionError); !ok || !overBudget(err) || xe.Expression != key {
		t.Errorf("SearchJSONAll: %v, want an *ExpressionError of the key, over the budget", err)
	}
}

// TestDecodeLimitGzipBomb runs powertools_base64_gzip on 128 MiB of
// zeros gzipped into 1 MiB members, ~170 KB in base64, and checks that
// decompression stops at the limit: what the search allocates stays
// within a few times the limit and the input.
func TestDecodeLimitGzipBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses up to 16 MiB")
	}
	// One member, then copies of it: gzip.Reader reads them as one
	// stream, and 128 MiB is never held.
	var member bytes.Buffer
	zw, err := gzip.NewWriterLevel(&member, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var doc bytes.Buffer
	doc.WriteString(`{"data":"`)
	enc := base64.NewEncoder(base64.StdEncoding, &doc)
	for range 128 {
		enc.Write(member.Bytes())
	}
	enc.Close()
	doc.WriteString(`"}`)
	raw := doc.Bytes()

	for _, limit := range []int{defaultDecodeLimit, 1 << 20} {
		for _, expr := range []string{"powertools_base64_gzip(data)", "[powertools_base64_gzip(data)] | [0]"} {
			t.Run(fmt.Sprint(limit, expr), func(t *testing.T) {
				e, err := Compile(expr, WithDecodeLimit(limit))
				if err != nil {
					t.Fatal(err)
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				_, err = e.SearchJSON(raw)
				runtime.ReadMemStats(&after)
				var tl *TooLargeError
				if !errors.As(err, &tl) || tl.Limit != limit {
					t.Fatalf("SearchJSON: %v, want a *TooLargeError", err)
				}
				alloc := after.TotalAlloc - before.TotalAlloc
				if bound := 2 * uint64(limit+len(raw)); alloc > bound {
					t.Errorf("SearchJSON allocated %d bytes, more than %d", alloc, bound)
				}
				t.Logf("limit %d, input %d bytes: %d bytes allocated", limit, len(raw), alloc)
			})
		}
	}
}
