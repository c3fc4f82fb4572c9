package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func mem(name string) Step { return Step{Kind: Member, Name: name} }
func idx(i int) Step       { return Step{Kind: Index, Index: i} }

var (
	jsonDoc = Step{Kind: Document}
	each    = Step{Kind: Each}
	toUpper = Step{Kind: Transform, Name: "upper", Transform: upperText}
)

// upperText is a Transform that upper-cases ASCII letters, spending the
// length of its result; "fail" is an error.
func upperText(text []byte, b Budget) ([]byte, Budget, error) {
	if string(text) == "fail" {
		return nil, b, errFail
	}
	if err := b.Spend(len(text)); err != nil {
		return nil, b, err
	}
	return bytes.ToUpper(text), b, nil
}

var errFail = errors.New("the transform fails")

func path(steps ...Step) []Step { return steps }

type (
	obj = map[string]any
	arr = []any
	num = json.Number
)

// findTests give Find's result, or a zero value of the error it returns
// with the fields that matter set: Quoted, TypeError.Got and, when not
// empty, DuplicateNameError.Variant. budget is the Limit of Find's
// Budget; 0 sets none.
var findTests = []struct {
	name   string
	doc    string
	path   []Step
	budget int
	want   any
	err    error
}{
	{name: "member", doc: `{"a":1,"b":2}`, path: path(mem("b")), want: num("2")},
	{name: "absent member", doc: `{"a":1}`, path: path(mem("b"))},
	{name: "null member", doc: `{"a":null}`, path: path(mem("a"))},
	{name: "nested", doc: `{"a":{"b":[1,{"c":"x"}]}}`, path: path(mem("a"), mem("b"), idx(1), mem("c")), want: "x"},
	{name: "object", doc: `{"a":{"b":[true]}}`, path: path(mem("a")), want: obj{"b": arr{true}}},
	{name: "empty path", doc: ` {"a":[1]} `, want: obj{"a": arr{num("1")}}},
	{name: "escaped name in the text", doc: `{"order\u005fid":"A"}`, path: path(mem("order_id")), want: "A"},
	{name: "non-ASCII name", doc: `{"\u00e9":1,"e":2}`, path: path(mem("é")), want: num("1")},
	{name: "empty name", doc: `{"":1}`, path: path(mem("")), want: num("1")},
	{name: "index in range", doc: `[10,20,30]`, path: path(idx(2)), want: num("30")},
	{name: "index past the end", doc: `[10]`, path: path(idx(1))},
	{name: "index on empty array", doc: `[]`, path: path(idx(0))},
	{name: "index on object", doc: `{"0":1}`, path: path(idx(0))},
	{name: "index on string", doc: `"abc"`, path: path(idx(0))},
	{name: "member on array", doc: `[{"a":1}]`, path: path(mem("a"))},
	{name: "member on string", doc: `"a"`, path: path(mem("a"))},
	{name: "member on number", doc: `{"a":1}`, path: path(mem("a"), mem("b"))},
	{name: "member on null", doc: `null`, path: path(mem("a"))},
	{name: "member past the end", doc: `[1]`, path: path(idx(3), mem("a"))},

	{name: "invalid after the selection", doc: `{"a":1,"b":tru}`, path: path(mem("a")), err: &SyntaxError{}},
	{name: "invalid before the selection", doc: `{"b":01,"a":1}`, path: path(mem("a")), err: &SyntaxError{}},
	{name: "data after the value", doc: `{"a":1} 2`, path: path(mem("a")), err: &SyntaxError{}},
	{name: "invalid skipped element", doc: `[1,[2,}],3]`, path: path(idx(2)), err: &SyntaxError{}},
	{name: "unclosed after the selection", doc: `{"a":1`, path: path(mem("a")), err: &SyntaxError{}},
	{name: "control byte in a skipped name", doc: "{\"\x01\":1,\"a\":2}", path: path(mem("a")), err: &SyntaxError{}},
	{name: "bad escape in a skipped string", doc: `{"b":"\x","a":1}`, path: path(mem("a")), err: &SyntaxError{}},
	{name: "bad escape in a skipped name", doc: `{"\u12":1,"a":1}`, path: path(mem("a")), err: &SyntaxError{}},
	{name: "invalid selected value", doc: `{"a":[1,]}`, path: path(mem("a"), idx(0)), err: &SyntaxError{}},
	{name: "empty text", doc: ``, path: path(mem("a")), err: &SyntaxError{}},

	{name: "document", doc: `{"body":"{\"order_id\":\"A\",\"n\":1}"}`, path: path(mem("body"), jsonDoc, mem("order_id")), want: "A"},
	{name: "whole document", doc: `{"body":"{\"n\":[1,2]}"}`, path: path(mem("body"), jsonDoc), want: obj{"n": arr{num("1"), num("2")}}},
	{name: "document at the root", doc: `"{\"a\":1}"`, path: path(jsonDoc, mem("a")), want: num("1")},
	{name: "document holding a string", doc: `{"b":"\"x\""}`, path: path(mem("b"), jsonDoc), want: "x"},
	{name: "document holding a number", doc: `{"b":" 12 "}`, path: path(mem("b"), jsonDoc), want: num("12")},
	{name: "document with escapes", doc: `{"b":"{\"\\u00e9\":\"\\ud83d\\ude00\"}"}`, path: path(mem("b"), jsonDoc, mem("é")), want: "😀"},
	{name: "document with escaped quotes", doc: `{"b":"{\u0022a\u0022:1}"}`, path: path(mem("b"), jsonDoc, mem("a")), want: num("1")},
	{name: "document with raw invalid UTF-8", doc: "{\"b\":\"\\\"\xff\\\"\"}", path: path(mem("b"), jsonDoc), err: &InvalidTextError{}},
	{name: "document with a lone surrogate", doc: `{"b":"\"\ud800\""}`, path: path(mem("b"), jsonDoc), err: &InvalidTextError{}},
	{name: "lone surrogate in a document", doc: `{"b":"\"\\ud800\""}`, path: path(mem("b"), jsonDoc), err: &InvalidTextError{Quoted: true}},
	{name: "surrogate pair in a document", doc: `{"b":"\"\\ud800\\udc00\""}`, path: path(mem("b"), jsonDoc), want: "\U00010000"},
	{name: "invalid UTF-8 beside the path", doc: "{\"a\":1,\"b\":\"\xff\"}", path: path(mem("a")), err: &InvalidTextError{}},
	{name: "invalid UTF-8 before the path", doc: "{\"b\":[\"\xc3\"],\"a\":1}", path: path(mem("a")), err: &InvalidTextError{}},
	{name: "lone surrogate in a skipped name", doc: `{"\udc00":1,"a":2}`, path: path(mem("a")), err: &InvalidTextError{}},
	{name: "lone surrogate in a document beside the path", doc: `{"b":"{\"a\":1,\"c\":\"\\ud800\"}"}`, path: path(mem("b"), jsonDoc, mem("a")), err: &InvalidTextError{Quoted: true}},
	{name: "lone surrogate in another document", doc: `{"b":"\"\\ud800\"","c":"1"}`, path: path(mem("c"), jsonDoc), want: num("1")},
	{name: "U+FFFD escaped", doc: `{"\ufffd":1}`, path: path(mem("\ufffd")), want: num("1")},
	{name: "U+FFFD raw", doc: "{\"\xef\xbf\xbd\":\"\xef\xbf\xbd\"}", path: path(mem("\ufffd")), want: "\ufffd"},
	{name: "nested documents", doc: `{"b":"{\"c\":\"{\\\"d\\\":7}\"}"}`, path: path(mem("b"), jsonDoc, mem("c"), jsonDoc, mem("d")), want: num("7")},
	{name: "member on a document's number", doc: `{"b":"1"}`, path: path(mem("b"), jsonDoc, mem("c"))},
	{name: "document not JSON", doc: `{"body":"hello"}`, path: path(mem("body"), jsonDoc), err: &SyntaxError{Quoted: true}},
	{name: "document empty", doc: `{"body":""}`, path: path(mem("body"), jsonDoc), err: &SyntaxError{Quoted: true}},
	{name: "document with data after", doc: `{"body":"{} x"}`, path: path(mem("body"), jsonDoc), err: &SyntaxError{Quoted: true}},
	{name: "document invalid after the selection", doc: `{"body":"{\"a\":1,}"}`, path: path(mem("body"), jsonDoc, mem("a")), err: &SyntaxError{Quoted: true}},
	{name: "nested document not JSON", doc: `{"b":"{\"c\":\"{\\\"d\\\"\"}"}`, path: path(mem("b"), jsonDoc, mem("c"), jsonDoc, mem("d")), err: &SyntaxError{Quoted: true}},
	{name: "document on a number", doc: `{"b":-0.5}`, path: path(mem("b"), jsonDoc), err: &TypeError{Got: "number"}},
	{name: "document on null", doc: `{"b":null}`, path: path(mem("b"), jsonDoc), err: &TypeError{Got: "null"}},
	{name: "document on true", doc: `{"b":true}`, path: path(mem("b"), jsonDoc), err: &TypeError{Got: "boolean"}},
	{name: "document on false", doc: `{"b":false}`, path: path(mem("b"), jsonDoc), err: &TypeError{Got: "boolean"}},
	{name: "document on an array", doc: `{"b":["{}"]}`, path: path(mem("b"), jsonDoc), err: &TypeError{Got: "array"}},
	{name: "document on an object", doc: `{"b":{}}`, path: path(mem("b"), jsonDoc), err: &TypeError{Got: "object"}},
	{name: "document on a missing member", doc: `{}`, path: path(mem("b"), jsonDoc), err: &TypeError{Got: "null"}},
	{name: "document past the end", doc: `[]`, path: path(idx(0), jsonDoc), err: &TypeError{Got: "null"}},
	{name: "document on a member of a number", doc: `{"b":1}`, path: path(mem("b"), mem("c"), jsonDoc), err: &TypeError{Got: "null"}},
	{name: "document on a document's missing member", doc: `{"b":"{}"}`, path: path(mem("b"), jsonDoc, mem("c"), jsonDoc), err: &TypeError{Got: "null"}},
	{name: "document at the root on a number", doc: `1`, path: path(jsonDoc), err: &TypeError{Got: "number"}},
	{name: "document on a number, text cut short", doc: `[1,`, path: path(idx(0), jsonDoc), err: &SyntaxError{}},
	{name: "document on a missing member, text cut short", doc: `[{}`, path: path(idx(0), mem("b"), jsonDoc), err: &SyntaxError{}},
	{name: "document on a number, document cut short", doc: `{"b":"[1,"}`, path: path(mem("b"), jsonDoc, idx(0), jsonDoc), err: &SyntaxError{Quoted: true}},

	{name: "exact duplicate", doc: `{"a":1,"a":2}`, path: path(mem("a")), err: &DuplicateNameError{}},
	{name: "exact duplicate apart", doc: `{"a":1,"b":2,"a":3}`, path: path(mem("a")), err: &DuplicateNameError{}},
	{name: "escaped duplicate", doc: `{"order_id":"A","order\u005fid":"B"}`, path: path(mem("order_id")), err: &DuplicateNameError{}},
	{name: "case variant alone", doc: `{"ORDER_ID":"A"}`, path: path(mem("order_id")), err: &DuplicateNameError{Variant: "ORDER_ID"}},
	{name: "case variant after", doc: `{"order_id":"A","Order_Id":"B"}`, path: path(mem("order_id")), err: &DuplicateNameError{}},
	{name: "case variant before", doc: `{"Order_Id":"B","order_id":"A"}`, path: path(mem("order_id")), err: &DuplicateNameError{}},
	{name: "null case variant", doc: `{"a":1,"A":null}`, path: path(mem("a")), err: &DuplicateNameError{}},
	{name: "upper-case path", doc: `{"id":1}`, path: path(mem("ID")), err: &DuplicateNameError{Variant: "id"}},
	{name: "Kelvin sign alone", doc: `{"\u212a":1}`, path: path(mem("k")), err: &DuplicateNameError{Variant: "\u212a"}},
	{name: "Kelvin sign and k", doc: `{"k":1,"\u212a":2}`, path: path(mem("k")), err: &DuplicateNameError{}},
	{name: "Kelvin sign in the path", doc: `{"k":1}`, path: path(mem("\u212a")), err: &DuplicateNameError{Variant: "k"}},
	{name: "long s and s", doc: `{"sku":"A","\u017fku":"B"}`, path: path(mem("sku")), err: &DuplicateNameError{}},
	{name: "long s alone", doc: `{"\u017fku":"B"}`, path: path(mem("sku")), err: &DuplicateNameError{Variant: "\u017fku"}},
	{name: "lone surrogates", doc: `{"\ud800":1,"\udc00":2}`, path: path(mem("\ufffd")), err: &InvalidTextError{}},
	{name: "variant deeper on the path", doc: `{"a":{"B":1}}`, path: path(mem("a"), mem("b")), err: &DuplicateNameError{Variant: "B"}},
	{name: "repeated object on the path", doc: `{"a":{"b":1},"a":{"c":2}}`, path: path(mem("a"), mem("b")), err: &DuplicateNameError{}},
	{name: "variant object on the path", doc: `{"a":{"b":1},"A":{"b":2}}`, path: path(mem("a"), mem("b")), err: &DuplicateNameError{}},
	{name: "variant in an element on the path", doc: `[{"id":1,"ID":2}]`, path: path(idx(0), mem("id")), err: &DuplicateNameError{}},
	{name: "variant in a document", doc: `{"body":"{\"id\":1,\"ID\":2}"}`, path: path(mem("body"), jsonDoc, mem("id")), err: &DuplicateNameError{Quoted: true}},
	{name: "variant of the member holding a document", doc: `{"body":"{}","Body":"{}"}`, path: path(mem("body"), jsonDoc), err: &DuplicateNameError{}},

	{name: "folded pair beside the path", doc: `{"order_id":"A","x":1,"X":2}`, path: path(mem("order_id")), err: &DuplicateNameError{}},
	{name: "exact pair beside the path", doc: `{"x":1,"order_id":"A","x":2}`, path: path(mem("order_id")), err: &DuplicateNameError{}},
	{name: "folded longer name beside the path", doc: `{"id":1,"idx":2,"IDX":3}`, path: path(mem("id")), err: &DuplicateNameError{}},
	{name: "folded pair in a sibling", doc: `{"a":1,"b":{"c":1,"C":2}}`, path: path(mem("a")), err: &DuplicateNameError{}},
	{name: "folded pair in another element", doc: `[{"c":1,"C":2},{"d":1}]`, path: path(idx(1), mem("d")), err: &DuplicateNameError{}},
	{name: "folded pair after the path", doc: `[{"d":1},{"c":1,"C":2}]`, path: path(idx(0), mem("d")), err: &DuplicateNameError{}},
	{name: "escaped pair beside the path", doc: `{"a":1,"b":{"c":1,"\u0063":2}}`, path: path(mem("a")), err: &DuplicateNameError{}},
	{name: "Kelvin pair beside the path", doc: `{"a":1,"b":{"\u212a":1,"k":2}}`, path: path(mem("a")), err: &DuplicateNameError{}},
	{name: "folded pair beside a document", doc: `{"body":"{\"id\":1}","x":1,"X":2}`, path: path(mem("body"), jsonDoc, mem("id")), err: &DuplicateNameError{}},
	{name: "folded pair in a document beside the path", doc: `{"body":"{\"id\":1,\"x\":1,\"X\":2}"}`, path: path(mem("body"), jsonDoc, mem("id")), err: &DuplicateNameError{Quoted: true}},
	{name: "folded pair under the path's type", doc: `{"a":{"b":[{"c":1,"C":2}]}}`, path: path(mem("a"), Step{Kind: Type}), err: &DuplicateNameError{}},
	{name: "folded pair in another document", doc: `{"b":"{\"x\":1,\"X\":2}","c":"{\"d\":1}"}`, path: path(mem("c"), jsonDoc, mem("d")), want: num("1")},
	{name: "distinct names past sixteen", doc: manyNames(40, `"a":{"b":1}`), path: path(mem("a"), mem("b")), want: num("1")},
	{name: "exact pair past sixteen", doc: manyNames(40, `"m39":1`), path: path(mem("a")), err: &DuplicateNameError{}},
	{name: "folded pair past sixteen, skipped", doc: `{"a":1,"b":` + manyNames(30, `"M29":1`) + `}`, path: path(mem("a")), err: &DuplicateNameError{}},
	{name: "dotted capital I is not i", doc: `{"\u0130":2,"i":1}`, path: path(mem("i")), want: num("1")},
	{name: "sharp s is not ss", doc: `{"ss":1,"\u00df":2}`, path: path(mem("ss")), want: num("1")},

	{name: "folded pair in the selected object", doc: `{"a":{"c":1,"C":2}}`, path: path(mem("a")), err: &DuplicateNameError{}},
	{name: "exact pair in the selected array", doc: `{"a":[{"c":1,"c":2}]}`, path: path(mem("a")), err: &DuplicateNameError{}},
	{name: "exact pair in the selected element", doc: `{"a":[{"c":1,"c":2}]}`, path: path(mem("a"), idx(0)), err: &DuplicateNameError{}},
	{name: "Kelvin pair deep in the selection", doc: `{"a":{"b":{"k":1,"\u212a":2}}}`, path: path(mem("a")), err: &DuplicateNameError{}},
	{name: "folded pair in the selected document", doc: `{"body":"{\"x\":1,\"X\":2}"}`, path: path(mem("body"), jsonDoc), err: &DuplicateNameError{Quoted: true}},
	{name: "folded pair in the whole text", doc: `{"a":1,"A":2}`, err: &DuplicateNameError{}},

	// 17 bytes for the number selected in the document, which is read
	// where it is.
	{name: "document within the budget", doc: `{"b":"{\"a\":1}"}`, path: path(mem("b"), jsonDoc, mem("a")), budget: 17, want: num("1")},
	{name: "value past the budget", doc: `{"b":"{\"a\":1}"}`, path: path(mem("b"), jsonDoc, mem("a")), budget: 16, err: &LimitError{Quoted: true}},
	{name: "long document copied", doc: `{"b":"[` + strings.Repeat(`\"x\",`, 200) + `1]"}`, path: path(mem("b"), jsonDoc, idx(200)), budget: 800, err: &LimitError{}},
	{name: "nested document past the budget", doc: `{"b":"{\"c\":\"[1,2]\"}"}`, path: path(mem("b"), jsonDoc, mem("c"), jsonDoc), budget: 100, err: &LimitError{Quoted: true}},
	{name: "budget on a document not read", doc: `{"b":"[1,2]","c":1}`, path: path(mem("c")), budget: 17, want: num("1")},
	// A slice and its first four slots, and two maps.
	{name: "object within the budget", doc: `{"a":[{},{}]}`, path: path(mem("a")), budget: 184, want: arr{obj{}, obj{}}},
	{name: "object past the budget", doc: `{"a":[{},{}]}`, path: path(mem("a")), budget: 183, err: &LimitError{}},
	{name: "whole text past the budget", doc: `[{},{},{},{}]`, budget: 100, err: &LimitError{}},
	{name: "transform past the budget", doc: `{"b":"abc"}`, path: path(mem("b"), toUpper), budget: 2, err: &LimitError{}},

	{name: "each element", doc: `{"r":[{"id":1},{"x":2},{"id":"c"}]}`, path: path(mem("r"), each, mem("id")), want: arr{num("1"), "c"}},
	{name: "each of an empty array", doc: `{"r":[]}`, path: path(mem("r"), each, mem("id")), want: arr{}},
	{name: "each element whole", doc: `[1,null,[2]]`, path: path(each), want: arr{num("1"), arr{num("2")}}},
	{name: "each of an object", doc: `{"r":{"id":1}}`, path: path(mem("r"), each, mem("id"))},
	{name: "each of nothing, then a document", doc: `{}`, path: path(mem("r"), each, jsonDoc)},
	{name: "each of a number, then a document", doc: `{"r":1}`, path: path(mem("r"), each, jsonDoc)},
	{name: "each element's document", doc: `{"r":["{\"a\":1}","{\"a\":2}"]}`, path: path(mem("r"), each, jsonDoc, mem("a")), want: arr{num("1"), num("2")}},
	{name: "each element's missing document", doc: `{"r":[{"b":"1"},{}]}`, path: path(mem("r"), each, mem("b"), jsonDoc), err: &TypeError{Got: "null"}},
	{name: "each of each", doc: `[[1,2],[],{"a":1},[3]]`, path: path(each, each), want: arr{arr{num("1"), num("2")}, arr{}, arr{num("3")}}},
	{name: "each and an index", doc: `[[1,2],[3]]`, path: path(each, idx(1)), want: arr{num("2")}},
	{name: "variant in an element", doc: `[{"id":1},{"ID":2}]`, path: path(each, mem("id")), err: &DuplicateNameError{Variant: "ID"}},
	{name: "each past the budget", doc: `[1,2,3,4,5]`, path: path(each), budget: 200, err: &LimitError{}},

	{name: "transform", doc: `{"b":"abc"}`, path: path(mem("b"), toUpper), want: "ABC"},
	{name: "transform, then a document", doc: `{"b":"{\"a\":1}"}`, path: path(mem("b"), toUpper, jsonDoc, mem("A")), want: num("1")},
	{name: "document, then a transform", doc: `{"b":"\"x\""}`, path: path(mem("b"), jsonDoc, toUpper), want: "X"},
	{name: "transform of a transform", doc: `"a"`, path: path(toUpper, toUpper), want: "A"},
	{name: "transform's type", doc: `"a"`, path: path(toUpper, Step{Kind: Type}), want: "string"},
	{name: "member of a transform", doc: `"a"`, path: path(toUpper, mem("a"))},
	{name: "document on a transform's member", doc: `"a"`, path: path(toUpper, mem("a"), jsonDoc), err: &TypeError{Got: "null"}},
	{name: "transform on a number", doc: `{"b":1}`, path: path(mem("b"), toUpper), err: &TypeError{Name: "upper", Got: "number"}},
	{name: "transform on nothing", doc: `{}`, path: path(mem("b"), toUpper), err: &TypeError{Name: "upper", Got: "null"}},
	{name: "transform's document not JSON", doc: `{"b":"x"}`, path: path(mem("b"), toUpper, jsonDoc), err: &SyntaxError{Quoted: true}},
}

func TestFind(t *testing.T) {
	t.Parallel()
	for _, tc := range findTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Find([]byte(tc.doc), &Budget{Limit: tc.budget}, tc.path)
			if tc.err == nil {
				if err != nil {
					t.Fatalf("Find(%q, %v): %v", tc.doc, tc.path, err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("Find(%q, %v) = %#v, want %#v", tc.doc, tc.path, got, tc.want)
				}
				return
			}
			if got != nil {
				t.Errorf("Find(%q, %v) = %#v with an error", tc.doc, tc.path, got)
			}
			checkError(t, err, tc.err)
		})
	}
}

// checkError fails unless err is of want's type, with the fields that
// matter equal.
func checkError(t *testing.T, err, want error) {
	t.Helper()
	switch w := want.(type) {
	case *SyntaxError:
		var e *SyntaxError
		if !errors.As(err, &e) {
			t.Fatalf("error %v, want a *SyntaxError", err)
		}
		if e.Quoted != w.Quoted {
			t.Errorf("SyntaxError %+v, want Quoted %v", *e, w.Quoted)
		}
	case *TypeError:
		var e *TypeError
		if !errors.As(err, &e) {
			t.Fatalf("error %v, want a *TypeError", err)
		}
		if e.Name != w.Name {
			t.Errorf("TypeError.Name = %q, want %q", e.Name, w.Name)
		}
		if e.Got != w.Got {
			t.Errorf("TypeError.Got = %q, want %q", e.Got, w.Got)
		}
	case *InvalidTextError:
		var e *InvalidTextError
		if !errors.As(err, &e) {
			t.Fatalf("error %v, want an *InvalidTextError", err)
		}
		if e.Quoted != w.Quoted {
			t.Errorf("InvalidTextError %+v, want Quoted %v", *e, w.Quoted)
		}
	case *LimitError:
		var e *LimitError
		if !errors.As(err, &e) {
			t.Fatalf("error %v, want a *LimitError", err)
		}
		if e.Quoted != w.Quoted || e.Len <= e.Limit {
			t.Errorf("LimitError %+v, want Quoted %v", *e, w.Quoted)
		}
	case *DuplicateNameError:
		var e *DuplicateNameError
		if !errors.As(err, &e) {
			t.Fatalf("error %v, want a *DuplicateNameError", err)
		}
		if e.Quoted != w.Quoted || e.Variant != w.Variant {
			t.Errorf("DuplicateNameError %+v, want Quoted %v, Variant %q", *e, w.Quoted, w.Variant)
		}
		if e.Variant == "" && e.Other == "" {
			t.Errorf("DuplicateNameError %+v names no other member", *e)
		}
	default:
		t.Fatalf("bad table: error %T", want)
	}
}

// TestFindDuplicates runs Find on every text that Decode refuses for its
// names, with paths that decode it, follow a member through it, and skip
// it.
func TestFindDuplicates(t *testing.T) {
	t.Parallel()
	for _, tc := range duplicateTests {
		for _, p := range [][]Step{nil, path(mem("zz")), path(idx(1), mem("zz")), path(Step{Kind: Type})} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := Find([]byte(tc.doc), nil, p)
				checkError(t, err, &DuplicateNameError{})
			})
		}
	}
}

// TestStructView checks the fuzz tests' references against texts whose
// reading is known: on the first eight, a struct reads another value than
// a map does, and Find refuses them; the last two check a name that is
// special in a struct tag and an element past the end.
func TestStructView(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc     string
		path    []Step
		want    string // the struct's reading; "" for none
		mapView any
	}{
		{`{"A":1}`, path(mem("a")), `1`, nil},
		{`{"\u212a":1}`, path(mem("k")), `1`, nil},
		{`{"sku":1,"\u017fku":2}`, path(mem("sku")), `2`, num("1")},
		{`{"a":1,"A":2}`, path(mem("a")), `2`, num("1")},
		{`{"a":{"b":1},"a":null}`, path(mem("a"), mem("b")), `1`, nil},
		{`{"a":{"b":1},"a":{"c":2}}`, path(mem("a"), mem("b")), `1`, nil},
		{`{"b":"{\"A\":1}"}`, path(mem("b"), jsonDoc, mem("a")), `1`, nil},
		{`[{"x":1},{"X":2}]`, path(idx(1), mem("x")), `2`, nil},
		{`{"-":1}`, path(mem("-")), `1`, num("1")},
		{`{"a":[1]}`, path(mem("a"), idx(1)), ``, nil},
	} {
		raw, ok, err := structView([]byte(tc.doc), tc.path)
		if !ok || err != nil || string(raw) != tc.want {
			t.Errorf("structView(%q, %v) = %s, %v, %v; want %s", tc.doc, tc.path, raw, ok, err, tc.want)
		}
		v, err := decodeStd([]byte(tc.doc))
		if err == nil {
			v, err = mapView(v, tc.path)
		}
		if err != nil || !reflect.DeepEqual(v, tc.mapView) {
			t.Errorf("mapView(%q, %v) = %#v, %v; want %#v", tc.doc, tc.path, v, err, tc.mapView)
		}
		var facts pathFacts
		if err := facts.read([]byte(tc.doc), tc.path); err != nil {
			t.Fatal(err)
		}
		pair := facts.pair || facts.quotedPair
		if _, err := Find([]byte(tc.doc), nil, tc.path); pair != (err != nil) {
			t.Errorf("Find(%q, %v): %v; the token stream shows a pair: %v", tc.doc, tc.path, err, pair)
		}
	}
}
