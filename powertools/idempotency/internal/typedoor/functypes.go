package typedoor

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
)

// This file holds what WrapFunc refuses of its function's types when it is
// built (docs/security.md, "What is refused"): an argument whose JSON
// would not stand for it, and a result that a replay could not give back
// as the function returned it.

// FuncTypes checks the argument type in and the result type out of a
// wrapped function, and says what is wrong with them. holdsAny reports
// that an argument can hold values in interfaces, whose []byte is checked
// on each call (see BytesInAny).
func FuncTypes(in, out reflect.Type) (holdsAny bool, err error) {
	if holdsAny, err = argumentType(in); err != nil {
		return false, fmt.Errorf("its argument type %v: %w", in, err)
	}
	if err := resultType(out); err != nil {
		return false, fmt.Errorf("its result type %v cannot come back from a record as the function returned it: %w", out, err)
	}
	return holdsAny, nil
}

// argumentType refuses a type that holds, at any depth, a struct whose
// json.Marshal is a MarshalJSON or MarshalText promoted from an embedded
// field, which writes that field alone: arguments that differ only in
// the struct's other fields would share a key. It reports whether the
// type can hold an interface value.
func argumentType(t reflect.Type) (holdsAny bool, err error) {
	err = walkTypes(t, "the argument", func(t reflect.Type, at string) (bool, error) {
		if hidden := hiddenFields(t); hidden != "" {
			return false, fmt.Errorf("%s: %s", at, hidden)
		}
		if t.Kind() == reflect.Interface {
			holdsAny = true
		}
		return !encodesItself(t), nil
	})
	return holdsAny, err
}

// hiddenFields says which fields of struct type t json.Marshal leaves out
// because a marshaller promoted from an embedded field writes t, or ""
// when none: the fields of t's own, not those of the type that declares
// the marshaller. A struct that only wraps such a type (SecondsEpochTime
// wraps time.Time) hides nothing.
func hiddenFields(t reflect.Type) string {
	from, index, ok := promotedMarshaller(t)
	if !ok {
		return ""
	}
	s, _ := structFields(t)
	for _, f := range s.fields {
		if len(f.index) < len(index) || !equalPrefix(f.index, index) {
			return fmt.Sprintf("json.Marshal writes %v with the marshaller of its embedded %s alone, and leaves out its field %s: values that differ only there would share a key; declare a MarshalJSON method on %v, or name the embedded field", t, from, f.name, t)
		}
	}
	return ""
}

func equalPrefix(a, prefix []int) bool {
	for i, x := range prefix {
		if a[i] != x {
			return false
		}
	}
	return true
}

// resultType refuses a type whose values json.Unmarshal cannot give back
// from what json.Marshal writes of them: a duplicate's replay would get
// another value, or a *CorruptedRecordError.
func resultType(t reflect.Type) error {
	return walkTypes(t, "the result", func(t reflect.Type, at string) (bool, error) {
		if hidden := hiddenFields(t); hidden != "" {
			return false, fmt.Errorf("%s: %s", at, hidden)
		}
		if encodesItself(t) {
			p := reflect.PointerTo(t)
			if p.Implements(unmarshalerType) || p.Implements(textUnmarshalerType) && !hasMethod(t, "MarshalJSON") {
				return false, nil
			}
			return false, fmt.Errorf("%s: %v encodes itself and has no method that decodes what it writes", at, t)
		}
		switch t.Kind() {
		case reflect.Interface:
			if t.Implements(reflect.TypeFor[error]()) && t.NumMethod() == 1 {
				return false, fmt.Errorf("%s is an error, which json.Marshal writes as {} or its fields, not its message", at)
			}
			return false, fmt.Errorf("%s is an interface (%v): a replay decodes JSON into it as map[string]any, []any, string, float64, bool or nil, not the type the function put there", at, t)
		case reflect.Func, reflect.Chan, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
			return false, fmt.Errorf("%s is a %v, which json.Marshal cannot write", at, t.Kind())
		case reflect.Map:
			switch k := t.Key(); k.Kind() {
			case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			default:
				if !k.Implements(textMarshalerType) || !reflect.PointerTo(k).Implements(textUnmarshalerType) {
					return false, fmt.Errorf("%s has keys of type %v, which JSON cannot hold and give back", at, k)
				}
			}
		case reflect.Struct:
			if _, dropped := structFields(t); len(dropped) > 0 {
				return false, fmt.Errorf("%s: json.Marshal does not write the field %s of %v (unexported, json:\"-\", or hidden by another of its name), so a replay would hold its zero value", at, dropped[0], t)
			}
		}
		return true, nil
	})
}

// walkTypes calls visit with t and each type that a value of t holds, as
// json.Marshal goes through it (pointers followed, each type once), and
// where it is; visit says whether to go inside it.
func walkTypes(t reflect.Type, at string, visit func(t reflect.Type, at string) (inside bool, err error)) error {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, at string) error
	walk = func(t reflect.Type, at string) error {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if seen[t] {
			return nil
		}
		seen[t] = true
		if inside, err := visit(t, at); err != nil || !inside {
			return err
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map:
			return walk(t.Elem(), at+"[]")
		case reflect.Struct:
			s, _ := structFields(t)
			for _, f := range s.fields {
				if err := walk(f.typ, at+"."+f.name); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(t, at)
}

// ErrBytesInAny is the reason an argument holding a []byte in an
// interface value is refused.
var ErrBytesInAny = errors.New("it holds a []byte in an interface value, which json.Marshal writes as the base64 string of its bytes, as it writes that string itself: the two arguments would share a key; give the field a type, []byte or string")

// BytesInAny reports whether v holds, inside an interface value, a byte
// slice that json.Marshal writes as base64. v has been encoded by
// json.Marshal already, so it holds no cycle.
func BytesInAny(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return false
		}
		e := v.Elem()
		if t := e.Type(); t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && !encodesItself(t) && !encodesItself(t.Elem()) {
			return true
		}
		return BytesInAny(e)
	case reflect.Pointer:
		return !v.IsNil() && BytesInAny(v.Elem())
	case reflect.Struct:
		if encodesItself(v.Type()) {
			return false
		}
		s, _ := structFields(v.Type())
		for _, f := range s.fields {
			if fv, err := v.FieldByIndexErr(f.index); err == nil && BytesInAny(fv) {
				return true
			}
		}
	case reflect.Map:
		if encodesItself(v.Type()) {
			return false
		}
		for it := v.MapRange(); it.Next(); {
			if BytesInAny(it.Value()) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 || encodesItself(v.Type()) {
			return false
		}
		for i := range v.Len() {
			if BytesInAny(v.Index(i)) {
				return true
			}
		}
	}
	return false
}

// promotedMarshaller returns, when json.Marshal writes a value of struct
// type t with a MarshalJSON or MarshalText that t takes from an embedded
// field rather than declaring it, the embedded fields it comes through,
// from t down to the type that declares it (by name, and as the index of
// the fields inside it). Go's reflection does not tell a promoted method
// from a declared one; the compiler's wrapper for a promoted method is a
// function it generates, "<autogenerated>" in the binary's line table,
// while a declared method has its source file.
func promotedMarshaller(t reflect.Type) (names string, index []int, ok bool) {
	if t.Kind() != reflect.Struct {
		return "", nil, false
	}
	for _, method := range []string{"MarshalJSON", "MarshalText"} {
		if !hasMethod(t, method) || declared(t, method) {
			continue
		}
		var path []string
		for d := t; d.Kind() == reflect.Struct && (len(path) == 0 || !declared(d, method)); {
			i := slices.IndexFunc(reflect.VisibleFields(d), func(sf reflect.StructField) bool {
				return sf.Anonymous && len(sf.Index) == 1 && hasMethod(sf.Type, method)
			})
			if i < 0 {
				break
			}
			sf := reflect.VisibleFields(d)[i]
			path, index = append(path, sf.Name), append(index, sf.Index[0])
			if d = sf.Type; d.Kind() == reflect.Pointer {
				d = d.Elem()
			}
		}
		return strings.Join(path, "."), index, true
	}
	return "", nil, false
}

// hasMethod reports whether t or *t has method.
func hasMethod(t reflect.Type, method string) bool {
	if _, ok := t.MethodByName(method); ok {
		return true
	}
	_, ok := reflect.PointerTo(t).MethodByName(method)
	return ok
}

// declared reports whether t or *t declares method itself.
func declared(t reflect.Type, method string) bool {
	for _, tt := range []reflect.Type{t, reflect.PointerTo(t)} {
		m, ok := tt.MethodByName(method)
		if !ok {
			continue
		}
		if f := runtime.FuncForPC(m.Func.Pointer()); f != nil {
			if file, _ := f.FileLine(f.Entry()); file != "<autogenerated>" {
				return true
			}
		}
	}
	return false
}
