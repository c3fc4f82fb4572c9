package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// grammarTests are documents with the validity json.Valid gives them:
// Decode must decode a valid one as encoding/json does, and refuse an
// invalid one with a *SyntaxError.
var grammarTests = []struct {
	name  string
	doc   string
	valid bool
}{
	{"empty", ``, false},
	{"only whitespace", " \t\r\n", false},
	{"every whitespace", " \t\r\n[ \t\r\n1 \t\r\n, \t\r\n{ \t\r\n\"a\" \t\r\n: \t\r\n2 \t\r\n} \t\r\n] \t\r\n", true},
	{"form feed", "\f1", false},
	{"vertical tab", "\v1", false},
	{"no-break space", "\u00a01", false},
	{"byte order mark", "\ufeff1", false},
	{"NUL after value", "1\x00", false},

	{"zero", `0`, true},
	{"minus zero", `-0`, true},
	{"minus zero fraction", `-0.0e-0`, true},
	{"leading zero", `01`, false},
	{"minus leading zero", `-01`, false},
	{"double zero", `00`, false},
	{"trailing dot", `1.`, false},
	{"dot exponent", `1.e5`, false},
	{"leading dot", `.5`, false},
	{"bare minus", `-`, false},
	{"plus", `+1`, false},
	{"empty exponent", `1e`, false},
	{"exponent sign only", `1e+`, false},
	{"exponent upper plus", `1E+2`, true},
	{"exponent minus", `1e-2`, true},
	{"fraction exponent", `1.5e3`, true},
	{"hex", `0x10`, false},
	{"long integer", `123456789012345678901234567890`, true},
	{"huge exponent", `1e400`, true},
	{"Infinity", `Infinity`, false},
	{"NaN", `NaN`, false},
	{"number in array", `[-1.5E-3,0,2]`, true},
	{"leading zero in array", `[01]`, false},
	{"bad number member", `{"a":1.}`, false},

	{"true", `true`, true},
	{"false", `false`, true},
	{"null", `null`, true},
	{"tru", `tru`, false},
	{"nul", `nul`, false},
	{"True", `True`, false},
	{"NULL", `NULL`, false},
	{"truex", `truex`, false},
	{"literal in array", `[true,false,null]`, true},
	{"short literal in array", `[fals]`, false},

	{"empty string", `""`, true},
	{"plain string", `"abc"`, true},
	{"unterminated string", `"abc`, false},
	{"NUL in string", "\"a\x00\"", false},
	{"unit separator in string", "\"a\x1f\"", false},
	{"tab in string", "\"a\tb\"", false},
	{"newline in string", "\"a\nb\"", false},
	{"DEL in string", "\"a\x7fb\"", true},
	{"every short escape", `"\"\\\/\b\f\n\r\t"`, true},
	{"unicode escape", `"\u00e9\u00E9\u0041"`, true},
	{"escape x", `"\x41"`, false},
	{"escape a", `"\a"`, false},
	{"escape zero", `"\0"`, false},
	{"escape quote", `"\'"`, false},
	{"escape U", `"\U0041"`, false},
	{"short unicode escape", `"\u12"`, false},
	{"short unicode escape at end", `"\u12`, false},
	{"non-hex unicode escape", `"\uGGGG"`, false},
	{"backslash at end", `"\`, false},
	{"escaped quote unterminated", `"\"`, false},
	{"surrogate pair", `"\ud83d\ude00"`, true},
	{"raw U+FFFD", "\"\xef\xbf\xbd\"", true},
	{"escaped U+FFFD", `"\ufffd\uFFFD"`, true},
	{"invalid UTF-8 outside string", "[\xff]", false},

	{"empty object", `{}`, true},
	{"empty array", `[]`, true},
	{"nested", `{"a":[{"b":{}},[]]}`, true},
	{"trailing comma in array", `[1,]`, false},
	{"trailing comma in object", `{"a":1,}`, false},
	{"leading comma", `[,1]`, false},
	{"missing comma", `[1 2]`, false},
	{"missing colon", `{"a" 1}`, false},
	{"missing value", `{"a":}`, false},
	{"unquoted name", `{a:1}`, false},
	{"single-quoted name", `{'a':1}`, false},
	{"number name", `{1:1}`, false},
	{"unclosed array", `[1`, false},
	{"unclosed object", `{"a":1`, false},
	{"mismatched close", `[1}`, false},
	{"extra close", `[]]`, false},
	{"escaped name", `{"\u0061\n":1}`, true},

	{"two values", `1 2`, false},
	{"two objects", `{} {}`, false},
	{"two strings", `"a""b"`, false},
	{"comma after value", `1,`, false},
	{"literal then garbage", `nullx`, false},
}

func TestDecodeGrammar(t *testing.T) {
	t.Parallel()
	for _, tc := range grammarTests {
		t.Run(tc.name, func(t *testing.T) {
			if json.Valid([]byte(tc.doc)) != tc.valid {
				t.Fatalf("json.Valid(%q) = %v: the table is wrong", tc.doc, !tc.valid)
			}
			got, err := Decode([]byte(tc.doc), nil)
			if !tc.valid {
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("Decode(%q) = %#v, %v; want a *SyntaxError", tc.doc, got, err)
				}
				if se.Quoted || se.Offset < 0 || se.Offset > len(tc.doc) {
					t.Errorf("Decode(%q): SyntaxError %+v", tc.doc, *se)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode(%q): %v", tc.doc, err)
			}
			want, err := decodeStd([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Decode(%q) = %#v, encoding/json gives %#v", tc.doc, got, want)
			}
		})
	}
}

func TestDecodeValues(t *testing.T) {
	t.Parallel()
	type M = map[string]any
	type A = []any
	type N = json.Number
	for _, tc := range []struct {
		name string
		doc  string
		want any
	}{
		{"minus zero", `-0`, N("-0")},
		{"number text kept", ` 1E+2 `, N("1E+2")},
		{"long integer", `12345678901234567890`, N("12345678901234567890")},
		{"literals", `[true,false,null]`, A{true, false, nil}},
		{"empty containers", `{"a":{},"b":[]}`, M{"a": M{}, "b": A{}}},
		{"short escapes", `"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
		{"unicode escapes", `"\u00e9\u00C9\u0000"`, "éÉ\x00"},
		{"surrogate pair", `"\ud83d\ude00"`, "😀"},
		{"raw multibyte", "\"é😀\"", "é😀"},
		{"highest surrogate pair", `"\udbff\udfff"`, "\U0010ffff"},
		{"U+FFFD raw and escaped", "\"\xef\xbf\xbd\\ufffd\"", "\ufffd\ufffd"},
		{"escaped names", `{"order\u005fid":"A","\ud83d\ude00":1}`, M{"order_id": "A", "😀": N("1")}},
		{"seventeen names", manyNames(17, ""), manyMembers(17)},
		{"same names in different objects", `[{"a":1},{"a":2,"b":{"a":3}}]`, A{M{"a": N("1")}, M{"a": N("2"), "b": M{"a": N("3")}}}},
		{"folded names in a string are text", `{"a":"{\"b\":1,\"B\":2}"}`, M{"a": `{"b":1,"B":2}`}},
		{"dotted i and dotless i do not fold to i", `{"i":1,"\u0130":2,"\u0131":3}`, M{"i": N("1"), "\u0130": N("2"), "\u0131": N("3")}},
		{"sharp s does not fold to ss", `{"ss":1,"\u00df":2}`, M{"ss": N("1"), "\u00df": N("2")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.doc), nil)
			if err != nil {
				t.Fatalf("Decode(%q): %v", tc.doc, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Decode(%q) = %#v, want %#v", tc.doc, got, tc.want)
			}
			std, err := decodeStd([]byte(tc.doc))
			if err != nil || !reflect.DeepEqual(got, std) {
				t.Errorf("Decode(%q) = %#v, encoding/json gives %#v, %v", tc.doc, got, std, err)
			}
		})
	}
}

// duplicateTests are objects with two names that encoding/json reads as
// one: Decode refuses them, and so does Find on a path that selects them.
var duplicateTests = []struct {
	name string
	doc  string
}{
	{"exact", `{"a":1,"a":2}`},
	{"exact, null first", `{"a":null,"a":2}`},
	{"exact, objects", `{"a":{"b":1},"a":{"c":2}}`},
	{"ASCII case", `{"order_id":1,"ORDER_ID":2}`},
	{"ASCII case, variant first", `{"Order_Id":1,"order_id":2}`},
	{"Kelvin sign and k", `{"k":1,"\u212a":2}`},
	{"Kelvin sign and K", "{\"K\":1,\"\u212a\":2}"},
	{"long s and s", `{"sku":1,"\u017fku":2}`},
	{"long s and S", "{\"\u017fKU\":1,\"SKU\":2}"},
	{"sigma forms", `{"\u03c3":1,"\u03c2":2}`},
	{"dz digraph forms", `{"\u01c5":1,"\u01c6":2}`},
	{"escaped underscore", `{"order_id":1,"order\u005fid":2}`},
	{"escaped letter", `{"\u0061":1,"a":2}`},
	{"U+FFFD escaped and raw", "{\"\\ufffd\":1,\"\xef\xbf\xbd\":2}"},
	{"surrogate pair escaped and raw", `{"\ud83d\ude00":1,"😀":2}`},
	{"past sixteen names", manyNames(20, `"M3":1`)},
	{"past sixteen names, the last two", manyNames(20, `"M19":1`)},
	{"past sixteen names, escaped", manyNames(20, `"\u006d7":1`)},
	{"past sixteen names, Kelvin sign", manyNames(17, `"\u212a":1,"k":2`)},
	{"seventeenth name", manyNames(16, `"m0":1`)},
	{"after other members", `{"x":1,"a":1,"y":2,"A":2}`},
	{"nested in object", `{"a":{"b":1,"B":2}}`},
	{"nested in array", `[1,{"b":1,"b":2}]`},
}

// manyNames is an object with n members, "m0" to "m<n-1>", then the
// members more, when not empty.
func manyNames(n int, more string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, `"m%d":%d,`, i, i)
	}
	if more == "" {
		return strings.TrimSuffix(b.String(), ",") + "}"
	}
	return b.String() + more + "}"
}

// manyMembers is manyNames(n, "") decoded.
func manyMembers(n int) map[string]any {
	m := map[string]any{}
	for i := range n {
		m[fmt.Sprintf("m%d", i)] = json.Number(strconv.Itoa(i))
	}
	return m
}

// textTests are strings that json.Valid accepts: Decode refuses those
// with text that encoding/json reads as U+FFFD without its saying U+FFFD,
// at the offset at, and decodes the others as want.
var textTests = []struct {
	name string
	doc  string
	at   int // -1 when valid
	want any
}{
	{"lone high surrogate", `"a\ud800b"`, 2, nil},
	{"lone low surrogate", `"\udc00"`, 1, nil},
	{"reversed surrogates", `"\udc00\ud800"`, 1, nil},
	{"high surrogate then letter", `"\ud800\u0041"`, 1, nil},
	{"high surrogate then short escape", `"\ud800\n"`, 1, nil},
	{"high surrogate at the end", `"x\udbff"`, 2, nil},
	{"two highs then low", `"\ud800\ud800\udc00"`, 1, nil},
	{"pair then lone low", `"\ud83d\ude00\ude00"`, 13, nil},
	{"raw invalid byte", "\"a\xffb\"", 2, nil},
	{"raw continuation byte", "\"\x80\"", 1, nil},
	{"raw truncated sequence", "\"\xe2\x82\"", 1, nil},
	{"raw overlong sequence", "\"\xc0\xaf\"", 1, nil},
	{"raw UTF-8 surrogate", "\"\xed\xa0\x80\"", 1, nil},
	{"raw past U+10FFFF", "\"\xf4\x90\x80\x80\"", 1, nil},
	{"raw invalid byte after eight ASCII", "\"abcdefghi\xff\"", 10, nil},
	{"raw invalid byte after an escape", "\"\\n\xfe\"", 3, nil},
	{"in a name", "{\"a\xff\":1}", 3, nil},
	{"in a nested value", `[1,{"a":"\udfff"}]`, 9, nil},
	{"in a second name", "{\"a\":1,\"\\udc00\":2}", 8, nil},

	{"surrogate pair", `"\ud83d\ude00"`, -1, "😀"},
	{"highest pair", `"\uDBFF\uDFFF"`, -1, "\U0010ffff"},
	{"raw U+FFFD", "\"\xef\xbf\xbd\"", -1, "\ufffd"},
	{"escaped U+FFFD", `"\ufffd"`, -1, "\ufffd"},
	{"raw four bytes", "\"\xf0\x9f\x98\x80\"", -1, "😀"},
	{"raw U+10FFFF", "\"\xf4\x8f\xbf\xbf\"", -1, "\U0010ffff"},
	{"escaped and raw", "\"\\u00e9\xc3\xa9\"", -1, "éé"},
	{"escape that is not a surrogate", `"\ud7ff\ue000"`, -1, "\ud7ff\ue000"},
}

func TestDecodeText(t *testing.T) {
	t.Parallel()
	for _, tc := range textTests {
		t.Run(tc.name, func(t *testing.T) {
			if !json.Valid([]byte(tc.doc)) || hasBadText([]byte(tc.doc)) != (tc.at >= 0) {
				t.Fatalf("%q: the table is wrong", tc.doc)
			}
			got, err := Decode([]byte(tc.doc), nil)
			if tc.at < 0 {
				std, _ := decodeStd([]byte(tc.doc))
				if err != nil || !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(got, std) {
					t.Errorf("Decode(%q) = %#v, %v; want %#v", tc.doc, got, err, tc.want)
				}
				return
			}
			var te *InvalidTextError
			if !errors.As(err, &te) || te.Offset != tc.at || te.Quoted {
				t.Fatalf("Decode(%q) = %#v, %v; want an *InvalidTextError at %d", tc.doc, got, err, tc.at)
			}
			// Skipped rather than decoded, and in a document held in a
			// string.
			_, err = Find([]byte(tc.doc), nil, []Step{{Kind: Type}})
			if !errors.As(err, &te) || te.Offset != tc.at {
				t.Errorf("Find(%q, Type): %v; want an *InvalidTextError at %d", tc.doc, err, tc.at)
			}
			if !utf8.ValidString(tc.doc) {
				return // a string cannot hold it and be valid
			}
			quoted, _ := json.Marshal(tc.doc)
			_, err = Find(quoted, nil, []Step{{Kind: Document}, {Kind: Type}})
			if !errors.As(err, &te) || !te.Quoted || te.Offset != tc.at {
				t.Errorf("Find(%s, Document Type): %v; want a quoted *InvalidTextError at %d", quoted, err, tc.at)
			}
		})
	}
}

func TestDecodeDuplicateNames(t *testing.T) {
	t.Parallel()
	for _, tc := range duplicateTests {
		t.Run(tc.name, func(t *testing.T) {
			if !json.Valid([]byte(tc.doc)) || !hasFoldPair([]byte(tc.doc)) {
				t.Fatalf("%q: the table is wrong", tc.doc)
			}
			got, err := Decode([]byte(tc.doc), nil)
			var de *DuplicateNameError
			if !errors.As(err, &de) {
				t.Fatalf("Decode(%q) = %#v, %v; want a *DuplicateNameError", tc.doc, got, err)
			}
			if de.Quoted || de.Variant != "" || !bytes.EqualFold([]byte(de.Name), []byte(de.Other)) {
				t.Errorf("Decode(%q): %+v", tc.doc, *de)
			}
		})
	}
}

func TestDecodeDepth(t *testing.T) {
	t.Parallel()
	nest := func(n int) []byte {
		return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
	}
	if _, err := Decode(nest(maxDepth), nil); err != nil {
		t.Errorf("Decode of %d nested arrays: %v", maxDepth, err)
	}
	// encoding/json accepts 10000 levels; the contract lets this package
	// refuse them.
	for _, n := range []int{maxDepth + 1, maxDepth + 2} {
		var se *SyntaxError
		if _, err := Decode(nest(n), nil); !errors.As(err, &se) {
			t.Errorf("Decode of %d nested arrays: %v, want a *SyntaxError", n, err)
		}
	}
	obj := []byte(strings.Repeat(`{"a":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1))
	var se *SyntaxError
	if _, err := Decode(obj, nil); !errors.As(err, &se) {
		t.Errorf("Decode of %d nested objects: %v, want a *SyntaxError", maxDepth+1, err)
	}
}

// TestSyntaxBeforeDuplicate checks that text that is not JSON is reported
// as such, even when names that fold together, text that is not Unicode
// or a reading past its budget come before the fault.
func TestSyntaxBeforeDuplicate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc   string
		path  []Step
		limit int // of the budget
	}{
		{`{"a":1,"A":2} x`, nil, 0},
		{`{"A":1} x`, []Step{{Kind: Member, Name: "a"}}, 0},
		{`{"a":1,"A":2,`, nil, 0},
		{`{"b":"{\"a\":1,\"a\":2,"}`, []Step{{Kind: Member, Name: "b"}, {Kind: Document}, {Kind: Member, Name: "a"}}, 0},
		{`{"a":1,"A":2} x`, []Step{{Kind: Type}}, 0},
		{`["\ud800"] x`, nil, 0},
		{`["\ud800"] x`, []Step{{Kind: Type}}, 0},
		{`{"\udc00":1} x`, []Step{{Kind: Member, Name: "a"}}, 0},
		{`{"b":"\"\\ud800\""} x`, []Step{{Kind: Member, Name: "b"}, {Kind: Document}}, 0},
		{`{"b":"[1,2]"} x`, []Step{{Kind: Member, Name: "b"}, {Kind: Document}}, 2},
		{`[{},{},{}] x`, nil, 100},
	} {
		var err error
		b := &Budget{Limit: tc.limit}
		if tc.path == nil {
			_, err = Decode([]byte(tc.doc), b)
		} else {
			_, err = Find([]byte(tc.doc), b, tc.path)
		}
		var syntax *SyntaxError
		if !errors.As(err, &syntax) {
			t.Errorf("%s: %v, want a *SyntaxError", tc.doc, err)
		}
	}
}
