package strictjson

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"unicode"
)

// TestEqualFold checks EqualFold against encoding/json's matching of
// member names to struct fields, for every rune that folds to another:
// each pair of its orbit, behind an ASCII letter, is one name to both.
func TestEqualFold(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.SimpleFold(r) == r {
			continue
		}
		for o := unicode.SimpleFold(r); o != r; o = unicode.SimpleFold(o) {
			field, member := "x"+string(r), "x"+string(o)
			if !EqualFold(field, member) {
				t.Errorf("EqualFold(%+q, %+q) = false", field, member)
			}
			if !isValidTag(field) {
				continue
			}
			if !fills(field, member) {
				t.Errorf("encoding/json does not fill %+q from %+q", field, member)
			}
		}
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"sku", "\u017fku", true},   // long s
		{"SKU", "\u017fKU", true},   // long s
		{"kind", "\u212aind", true}, // Kelvin sign
		{"order_id", "ORDER_ID", true},
		{"ss", "\u00df", false},    // sharp s folds to no pair of letters
		{"i", "\u0130", false},     // dotted capital I
		{"i", "\u0131", false},     // dotless i
		{"\ufffd", "\ufffd", true}, // U+FFFD is a name like any other
		{"a", "ab", false},
		{"", "", true},
	} {
		if got := EqualFold(tc.a, tc.b); got != tc.want {
			t.Errorf("EqualFold(%+q, %+q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if isValidTag(tc.a) && fills(tc.a, tc.b) != tc.want {
			t.Errorf("encoding/json fills %+q from %+q: %v, want %v", tc.a, tc.b, !tc.want, tc.want)
		}
	}
}

// fills reports whether encoding/json fills a struct field tagged field
// from a member named member.
func fills(field, member string) bool {
	typ := reflect.StructOf([]reflect.StructField{{Name: "V", Type: reflect.TypeFor[int](), Tag: reflect.StructTag(`json:` + strconv.Quote(field))}})
	v := reflect.New(typ)
	if err := json.Unmarshal([]byte(`{`+strconv.Quote(member)+`:1}`), v.Interface()); err != nil {
		panic(err)
	}
	return v.Elem().Field(0).Int() == 1
}
