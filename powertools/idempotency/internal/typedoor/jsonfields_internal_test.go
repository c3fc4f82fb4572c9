package typedoor

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The types structFields is compared on: embedding, tags, ties and
// unexported parts, with string fields only, so that one probe fills any.
type (
	fieldsInner struct {
		A    string
		B    string `json:"b"`
		C    string `json:"shadowed"`
		Dtag string `json:"D"`
	}
	fieldsOther struct {
		A string
		D string
	}
	fieldsHidden struct{ E string }
	FieldsPtr    struct{ F string }
	fieldsOuter  struct {
		fieldsInner
		fieldsOther
		*FieldsPtr
		fieldsHidden `json:"hidden"`
		Shadowed     string
		Tagged       string `json:"b"`
		Skipped      string `json:"-"`
		//lint:ignore SA5008 the name "-", which encoding/json reads so
		Dash string `json:"-,"`
		//lint:ignore SA5008 a tag that encoding/json does not take as a name
		Bad     string `json:"a\"b"`
		Kelvin  string `json:"kind"`
		private string
	}
	fieldsLoop struct {
		//lint:ignore U1000 a type that embeds itself, which the walk must end on
		*fieldsLoop
		G string
	}
)

// TestStructFieldsAsEncodingJSON compares structFields with encoding/json
// itself: the names json.Marshal writes, and the field json.Unmarshal
// fills from each member name, case variants included.
func TestStructFieldsAsEncodingJSON(t *testing.T) {
	for _, v := range []any{fieldsOuter{FieldsPtr: &FieldsPtr{}, private: "p"}, fieldsLoop{}} {
		typ := reflect.TypeOf(v)
		s, _ := structFields(typ)
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var written map[string]json.RawMessage
		if err := json.Unmarshal(b, &written); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range s.fields {
			names = append(names, f.name)
		}
		if got, want := slices.Sorted(slices.Values(names)), slices.Sorted(mapKeys(written)); !slices.Equal(got, want) {
			t.Errorf("%v: fields %q, json.Marshal writes %q", typ, got, want)
		}
		for _, name := range append(names, "a", "B", "SHADOWED", "\u212aind", "KIND", "hidden", "e", "D", "d", "nothing") {
			ptr := reflect.New(typ)
			if typ == reflect.TypeFor[fieldsOuter]() {
				ptr.Elem().FieldByName("FieldsPtr").Set(reflect.ValueOf(&FieldsPtr{}))
			}
			doc, _ := json.Marshal(map[string]string{name: "z"})
			if err := json.Unmarshal(doc, ptr.Interface()); err != nil {
				continue
			}
			filled := ""
			for _, f := range reflect.VisibleFields(typ) {
				if fv, err := ptr.Elem().FieldByIndexErr(f.Index); err == nil && fv.Kind() == reflect.String && fv.String() == "z" {
					filled = f.Name
				}
			}
			got := ""
			if f := s.field(name); f != nil {
				got = typ.FieldByIndex(f.index).Name
			}
			if got != filled {
				t.Errorf("%v: member %q fills %q, structFields says %q", typ, name, filled, got)
			}
		}
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

type (
	textKey   string
	selfValue struct{ X string }
)

func (k *textKey) UnmarshalText(b []byte) error { *k = textKey(strings.ToLower(string(b))); return nil }

var selfDecodes []string

func (v *selfValue) UnmarshalJSON(b []byte) error {
	selfDecodes = append(selfDecodes, string(b))
	return nil
}

// TestDecodesItselfAsEncodingJSON compares decodesItself with what
// encoding/json does: whether a value reaches the type's own method, and
// whether a null does.
func TestDecodesItselfAsEncodingJSON(t *testing.T) {
	type holder struct {
		Value  selfValue
		Ptr    *selfValue
		Time   time.Time
		Raw    json.RawMessage
		Inline struct{ selfValue }
		Text   textKey
	}
	selfDecodes = nil
	var h holder
	if err := json.Unmarshal([]byte(`{"Value":null,"Ptr":null,"Inline":{"X":"x"}}`), &h); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(selfDecodes, []string{"null"}) || h.Inline.X != "x" {
		t.Errorf("decodes %q, inline %+v: want a null for Value alone, and Inline decoded field by field", selfDecodes, h.Inline)
	}
	typ := reflect.TypeFor[holder]()
	for _, tt := range []struct {
		field         string
		self, nullRun bool
	}{
		{"Value", true, true},
		{"Ptr", true, false},
		{"Time", true, true},
		{"Raw", false, false},
		{"Inline", false, false},
		{"Text", true, false},
	} {
		f, _ := typ.FieldByName(tt.field)
		d := decodesItself(f.Type, false)
		if (d.typ != nil) != tt.self || d.typ != nil && (d.json && !d.nullSkips) != tt.nullRun {
			t.Errorf("%s: decodesItself = %+v, want self %v, null reaching it %v", tt.field, d, tt.self, tt.nullRun)
		}
	}
	if d := decodesItself(reflect.TypeFor[struct{ selfValue }](), true); d.typ == nil || !d.json {
		t.Errorf("a root of an unnamed struct embedding a decoder: %+v, want its pointer's UnmarshalJSON", d)
	}
}
