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
	"strings"
	"testing"
)

func TestWithDecodeLimitInvalid(t *testing.T) {
	for _, n := range []int{0, -1} {
		_, err := Compile("powertools_json(body)", WithDecodeLimit(n))
		var ve *InvalidValueError
		if !errors.As(err, &ve) {
			t.Errorf("Compile with WithDecodeLimit(%d): %v, want an *InvalidValueError", n, err)
		}
	}
}

// TestDecodeLimit runs each decoding function at its limit and one byte
// under it, by every way of searching: the size is that of the output, or
// of the text powertools_json decodes, and the error the same everywhere.
func TestDecodeLimit(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	doc := map[string]any{
		"json":    `{"a":1}`, // 7 bytes
		"b64":     b64([]byte("hello")),
		"b64nl":   "aGVs\nbG8=\r\n", // "hello", across lines
		"b64pad2": b64([]byte("hi")),
		"b64none": b64([]byte("abc")),
		"gz":      gzipBase64(t, []byte("hello world")),
		"docs":    []any{`{"a":1}`, `{"a":22}`},
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expr string
		size int // the size that must fit
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
	} {
		fn := tc.expr[strings.Index(tc.expr, "powertools_"):strings.Index(tc.expr, "(")]
		for _, limit := range []int{tc.size, tc.size - 1} {
			t.Run(fmt.Sprintf("%s/%d", tc.expr, limit), func(t *testing.T) {
				e, err := Compile(tc.expr, WithDecodeLimit(limit))
				if err != nil {
					t.Fatal(err)
				}
				var results [2]any
				var errs [2]error
				results[0], errs[0] = e.Search(mustDecode(raw))
				results[1], errs[1] = e.SearchJSON(raw)
				for i, name := range []string{"Search", "SearchJSON"} {
					if limit == tc.size {
						if errs[i] != nil || !reflect.DeepEqual(results[i], tc.want) {
							t.Errorf("%s = %#v, %v; want %#v", name, results[i], errs[i], tc.want)
						}
						continue
					}
					var ve *InvalidValueError
					var tl *TooLargeError
					if !errors.As(errs[i], &ve) || !errors.As(errs[i], &tl) || ve.Function != fn || tl.Function != fn || tl.Limit != limit || tl.Size <= limit {
						t.Errorf("%s = %#v, %v; want an *InvalidValueError of %s wrapping a *TooLargeError", name, results[i], errs[i], fn)
					}
				}
				if !reflect.DeepEqual(errs[0], errs[1]) {
					t.Errorf("Search: %v; SearchJSON: %v", errs[0], errs[1])
				}
			})
		}
	}
}

// TestDecodeLimitAll checks that SearchJSONAll, reading one document for
// expressions of different limits, applies each expression's own.
func TestDecodeLimitAll(t *testing.T) {
	raw := []byte(`{"body":"{\"order_id\":\"A\"}"}`) // a document of 16 bytes
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
		if _, err := SearchJSONAll(raw, exprs...); !errors.As(err, &tl) || tl.Limit != 15 || tl.Size != 16 {
			t.Errorf("SearchJSONAll: %v, want a *TooLargeError of limit 15", err)
		}
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
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			e, err := Compile("powertools_base64_gzip(data)", WithDecodeLimit(limit))
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
			if bound := 4 * uint64(limit+len(raw)); alloc > bound {
				t.Errorf("SearchJSON allocated %d bytes, more than %d", alloc, bound)
			}
			t.Logf("limit %d, input %d bytes: %d bytes allocated", limit, len(raw), alloc)
		})
	}
}
