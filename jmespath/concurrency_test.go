package jmespath

import (
	"encoding/json"
	"reflect"
	"sync"
	"testing"
)

// One compiled expression serves many goroutines; run with -race.
func TestConcurrentSearch(t *testing.T) {
	t.Parallel()
	exprs := []*Expression{
		MustCompile("powertools_json(body).order_id"),
		MustCompile("sort_by(powertools_json(body).items, &price)[*].sku"),
		MustCompile("`[1, {\"a\": 2}]`"),
	}
	data, err := decodeStd(apiEvent)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]any, len(exprs))
	for i, e := range exprs {
		if want[i], err = e.Search(data); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 50; n++ {
				for i, e := range exprs {
					got, err := e.SearchJSON(apiEvent)
					if err != nil || !reflect.DeepEqual(got, want[i]) {
						t.Errorf("%s = %#v, %v; want %#v", e, got, err, want[i])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// A caller changing a result must not change the compiled literal.
func TestLiteralResultsAreCopies(t *testing.T) {
	t.Parallel()
	e := MustCompile("`{\"a\": [1, 2]}`")
	first, _ := e.Search(nil)
	first.(map[string]any)["a"].([]any)[0] = "changed"
	first.(map[string]any)["b"] = true
	second, _ := e.Search(nil)
	want := map[string]any{"a": []any{json.Number("1"), json.Number("2")}}
	if !reflect.DeepEqual(second, want) {
		t.Errorf("second search = %#v, want %#v", second, want)
	}
}

// Search does not change its input, even with functions that sort.
func TestSearchLeavesDataAlone(t *testing.T) {
	t.Parallel()
	data, _ := decodeStd([]byte(`{"a": [3, 1, 2], "p": [{"k": 2}, {"k": 1}]}`))
	before, _ := decodeStd([]byte(`{"a": [3, 1, 2], "p": [{"k": 2}, {"k": 1}]}`))
	for _, expr := range []string{"sort(a)", "reverse(a)", "sort_by(p, &k)", "merge(p[0], p[1])", "a[::-1]"} {
		if _, err := MustCompile(expr).Search(data); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(data, before) {
		t.Errorf("data changed: %#v", data)
	}
}

// TestConcurrentCompile compiles expressions from many goroutines at once,
// as functions sharing a process do at cold start: no two compilations may
// share state. Run with -race; each result must search as one compiled
// alone does.
func TestConcurrentCompile(t *testing.T) {
	t.Parallel()
	sources := []string{
		"powertools_json(body).order_id",
		"sort_by(powertools_json(body).items, &price)[*].sku",
		"{id: requestContext.requestId, m: httpMethod, h: headers.*}",
		"Records[?messageId != `null`].[messageId, powertools_json(body).a]",
		"`[1, {\"a\": 2}]`",
		"length(keys(headers)) > `3` && !isBase64Encoded",
	}
	data, err := decodeStd(apiEvent)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]any, len(sources))
	for i, src := range sources {
		if want[i], err = MustCompile(src).Search(data); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 200; n++ {
				i := (g + n) % len(sources)
				e, err := Compile(sources[i])
				if err != nil {
					t.Error(err)
					return
				}
				if got, err := e.Search(data); err != nil || !reflect.DeepEqual(got, want[i]) || e.String() != sources[i] {
					t.Errorf("%s compiled concurrently: %#v, %v; want %#v", sources[i], got, err, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}
