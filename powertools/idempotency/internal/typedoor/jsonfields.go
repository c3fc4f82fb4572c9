package typedoor

import (
	"cmp"
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/gopowertools/lambda/internal/strictjson"
)

// This file holds encoding/json's rules about Go types, as the middleware
// needs them to read an event as a handler's type decodes it: which
// member names fill which struct fields, which types decode or encode
// themselves, which map keys it converts. They follow encoding/json's own
// code (typeFields, indirect, the map cases of object); the differential
// tests against it keep them honest.

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	marshalerType       = reflect.TypeFor[json.Marshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
)

// jsonField is a struct field as encoding/json reads and writes it.
type jsonField struct {
	name  string
	index []int // from the struct, through embedded structs
	typ   reflect.Type
	tag   bool // name comes from a json tag
}

// jsonStruct is a struct type's fields, as encoding/json sees them.
type jsonStruct struct {
	fields []jsonField // in index order
	exact  map[string]*jsonField
}

// field returns the field that encoding/json fills from a member named
// name: the one of that name, else the first whose name folds to it; nil
// when none does.
func (s *jsonStruct) field(name string) *jsonField {
	if f := s.exact[name]; f != nil {
		return f
	}
	for i := range s.fields {
		if strictjson.EqualFold(s.fields[i].name, name) {
			return &s.fields[i]
		}
	}
	return nil
}

// fieldCache holds structFields' answers, by type, as encoding/json
// caches its own.
var fieldCache sync.Map // reflect.Type -> *cachedFields

type cachedFields struct {
	s       *jsonStruct
	dropped []string
}

// structFields returns the fields of the struct type t as encoding/json's
// typeFields finds them: exported fields and those promoted from embedded
// structs, named by their tags, the shallowest (then tagged) one of each
// name winning and names that tie dropped. dropped lists the exported
// fields that lose so, and those that json:"-" or an unexported name
// hide: fields that encoding/json neither reads nor writes.
func structFields(t reflect.Type) (s *jsonStruct, dropped []string) {
	if c, ok := fieldCache.Load(t); ok {
		return c.(*cachedFields).s, c.(*cachedFields).dropped
	}
	s, dropped = typeFields(t)
	fieldCache.Store(t, &cachedFields{s: s, dropped: dropped})
	return s, dropped
}

// typeFields is structFields without its cache.
func typeFields(t reflect.Type) (s *jsonStruct, dropped []string) {
	type level struct {
		typ   reflect.Type
		index []int
	}
	var fields []jsonField
	next := []level{{typ: t}}
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current := next
		next = nil
		count := map[reflect.Type]int{}
		for _, l := range current {
			count[l.typ]++
		}
		for _, l := range current {
			if visited[l.typ] {
				continue
			}
			visited[l.typ] = true
			for i := 0; i < l.typ.NumField(); i++ {
				sf := l.typ.Field(i)
				ft := sf.Type
				if sf.Anonymous {
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					dropped = append(dropped, sf.Name)
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					dropped = append(dropped, sf.Name)
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				if !validTag(name) {
					name = ""
				}
				index := append(slices.Clone(l.index), i)
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					f := jsonField{name: cmp.Or(name, sf.Name), index: index, typ: sf.Type, tag: name != ""}
					fields = append(fields, f)
					if count[l.typ] > 1 {
						fields = append(fields, f) // a tie, so that the name is dropped
					}
					continue
				}
				next = append(next, level{typ: ft, index: index})
			}
		}
	}
	slices.SortStableFunc(fields, func(a, b jsonField) int {
		return cmp.Or(strings.Compare(a.name, b.name), cmp.Compare(len(a.index), len(b.index)),
			cmp.Compare(boolRank(a.tag), boolRank(b.tag)), slices.Compare(a.index, b.index))
	})
	var out []jsonField
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		// The first dominates, unless the next is as shallow and as
		// tagged: then Go's rules leave neither.
		if j-i == 1 || len(fields[i].index) != len(fields[i+1].index) || fields[i].tag != fields[i+1].tag {
			out = append(out, fields[i])
		} else {
			dropped = append(dropped, fields[i].name)
		}
		i = j
	}
	slices.SortFunc(out, func(a, b jsonField) int { return slices.Compare(a.index, b.index) })
	s = &jsonStruct{fields: out, exact: make(map[string]*jsonField, len(out))}
	for i := range out {
		s.exact[out[i].name] = &s.fields[i]
	}
	return s, dropped
}

func boolRank(tagged bool) int {
	if tagged {
		return 0
	}
	return 1
}

// validTag is encoding/json's isValidTag.
func validTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// selfDecoding is how a value at some place decodes itself, if it does.
type selfDecoding struct {
	typ  reflect.Type // the type whose method decodes it; nil: it does not
	json bool         // by UnmarshalJSON; else by UnmarshalText, from a JSON string
	// nullSkips: a null sets the pointer it sits behind to nil instead
	// of reaching the method.
	nullSkips bool
}

// decodesItself says whether encoding/json hands the value of type t at a
// place of a struct, slice, array or map element to a method of t's (as
// its indirect does): a named type whose pointer has UnmarshalJSON or
// UnmarshalText, or a pointer to one. At the root (json.Unmarshal's
// argument is a pointer to t) a null reaches the method too.
// json.RawMessage is not counted: its UnmarshalJSON keeps the text for
// the handler to decode.
func decodesItself(t reflect.Type, root bool) selfDecoding {
	found := func(p reflect.Type, nullSkips bool) selfDecoding {
		switch {
		case p.Elem() == rawMessageType:
		case p.Implements(unmarshalerType):
			return selfDecoding{typ: p.Elem(), json: true, nullSkips: nullSkips}
		case p.Implements(textUnmarshalerType):
			return selfDecoding{typ: p.Elem(), nullSkips: nullSkips}
		}
		return selfDecoding{}
	}
	if root {
		if d := found(reflect.PointerTo(t), false); d.typ != nil {
			return d
		}
	}
	if t.Kind() != reflect.Pointer {
		if t.Name() != "" && !root {
			return found(reflect.PointerTo(t), false)
		}
		return selfDecoding{}
	}
	for ; t.Kind() == reflect.Pointer; t = t.Elem() {
		if t.NumMethod() > 0 {
			if d := found(t, true); d.typ != nil {
				return d
			}
		}
	}
	return selfDecoding{}
}

// encodesItself reports whether json.Marshal writes a value of type t
// (or, when it is addressable, of *t) with its own MarshalJSON or
// MarshalText: then the value's fields are not what it writes.
func encodesItself(t reflect.Type) bool {
	for _, tt := range []reflect.Type{t, reflect.PointerTo(t)} {
		if tt.Implements(marshalerType) || tt.Implements(textMarshalerType) {
			return true
		}
	}
	return false
}

// convertsKeys reports whether encoding/json converts the member names of
// an object into map keys of type k, rather than taking them as they are:
// by k's UnmarshalText, or as integers ("1", "01" and "+1" all become 1).
func convertsKeys(k reflect.Type) bool {
	if reflect.PointerTo(k).Implements(textUnmarshalerType) {
		return true
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// mapKey returns the key of type k that encoding/json makes of the member
// name, comparable with ==, and whether it makes one: when it does not,
// the event does not decode.
func mapKey(k reflect.Type, name string) (any, bool) {
	if reflect.PointerTo(k).Implements(textUnmarshalerType) {
		v := reflect.New(k)
		if err := v.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(name)); err != nil {
			return nil, false
		}
		return v.Elem().Interface(), true
	}
	switch k.Kind() {
	case reflect.String:
		return name, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(name, 10, 64)
		if err != nil || reflect.Zero(k).OverflowInt(n) {
			return nil, false
		}
		return n, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(name, 10, 64)
		if err != nil || reflect.Zero(k).OverflowUint(n) {
			return nil, false
		}
		return n, true
	}
	return nil, false
}

// inside returns the types of every place inside a value of type t, t
// included: its fields, elements and map values, down to the types that
// decode themselves and the values the handler decodes itself.
func inside(t reflect.Type) []reflect.Type {
	seen := map[reflect.Type]bool{}
	var out []reflect.Type
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		if seen[t] {
			return
		}
		seen[t] = true
		out = append(out, t)
		if decodesItself(t, false).typ != nil {
			return
		}
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(t.Elem())
		case reflect.Map:
			walk(t.Elem())
		case reflect.Struct:
			s, _ := structFields(t)
			for _, f := range s.fields {
				walk(f.typ)
			}
		}
	}
	walk(t)
	return out
}

// holdsKeyMaps reports whether a value of type t, decoded by
// encoding/json, can hold a map whose keys it converts (outside what
// decodes itself).
func holdsKeyMaps(t reflect.Type) bool {
	for _, q := range inside(t) {
		if q.Kind() == reflect.Map && convertsKeys(q.Key()) && decodesItself(q, false).typ == nil {
			return true
		}
	}
	return false
}
