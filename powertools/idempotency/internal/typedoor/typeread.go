package typedoor

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/gopowertools/lambda/internal/exprpath"
	"github.com/gopowertools/lambda/internal/keyformat"
	"github.com/gopowertools/lambda/jmespath"
)

// This file carries out, on each event, what a typePlan says: from the
// values of its probes, it checks the objects that decode into maps whose
// keys encoding/json converts, reads what self-decoding values decode
// where the expression reads into them, and marks the nulls that the
// handler tells from absent members. value is what the strict read
// selected.

// apply returns the value that p's expression selects from the event
// payload as the handler's type reads it, or a *jmespath.ExpressionError;
// probes are the values of the door's probes. In a Powertools mode (compat) the value
// stays the one Powertools selects, and an event on which the type reads
// otherwise is refused.
func (p *typePlan) apply(payload []byte, probes []any, value any, compat bool) (any, error) {
	refuse := func(err error) (any, error) {
		return nil, &jmespath.ExpressionError{Expression: p.expr, Err: err}
	}
	for _, m := range p.maps {
		var err error
		visit(probes[m.probe], m.rest, func(v any) {
			if obj, ok := v.(map[string]any); ok && err == nil {
				err = m.check(obj)
			}
		})
		if err != nil {
			return refuse(err)
		}
	}
	for _, d := range p.deep {
		var err error
		visit(probes[d.probe], d.rest, func(v any) {
			if err == nil {
				err = keysInside(v, d.typ, d.at)
			}
		})
		if err != nil {
			return refuse(err)
		}
	}
	// doc is, when p has selves, the event as the expression reads it,
	// with what decodes itself read so: the value at within, rewritten,
	// in objects and arrays that hold nothing else on the way to it.
	var doc any
	if len(p.selves) > 0 {
		v := probes[p.doc]
		var err error
		for _, s := range p.selves {
			if v, err = replace(v, s.at[len(p.within):], s.decode); err != nil {
				return refuse(err)
			}
		}
		doc = nest(p.within, v)
		typed, err := p.expr.Search(doc)
		if err != nil {
			return refuse(err)
		}
		if compat && !sameJSON(value, typed) {
			return refuse(fmt.Errorf("the handler's type decodes %s itself, and reads another value there than the event holds, which Powertools keys on", p.selves[0].path))
		}
		if !compat {
			value = typed
		}
	}
	var at []any
	for _, n := range p.nulls {
		if !n.selected(value) {
			continue
		}
		if doc == nil {
			holder, err := n.holder.SearchJSON(payload)
			if err != nil {
				return refuse(err)
			}
			if !present(holder, n.at[len(n.at)-1:]) {
				continue
			}
		} else if !present(doc, n.at) {
			continue
		}
		if compat {
			return refuse(fmt.Errorf("%s is null, which the handler's type tells from an absent member, and Powertools hashes both as null", render(n.at)))
		}
		at = append(at, n.where())
	}
	if len(at) > 0 {
		return keyformat.Nulls{Value: value, At: at}, nil
	}
	return value, nil
}

// check refuses two names of obj that become one key of m's map type,
// and a name that becomes a key the expression looks up under another
// name: encoding/json would fill one map entry from both, the last one
// winning, while the strict read sees two members.
func (m *mapSite) check(obj map[string]any) error {
	names := slices.Sorted(maps.Keys(obj))
	seen := make(map[any]string, len(names))
	for _, name := range names {
		key, ok := mapKey(m.typ.Key(), name)
		if !ok {
			continue // the event does not decode: the handler refuses it
		}
		if other, dup := seen[key]; dup {
			return fmt.Errorf("the member names %q and %q of %s both become the key %v of %v", other, name, render(m.at), key, m.typ)
		}
		seen[key] = name
	}
	for i, name := range m.names {
		if other, ok := seen[m.keys[i]]; ok && other != name {
			return fmt.Errorf("the member name %q of %s becomes the key %v of %v, which the expression reads as %q", other, render(m.at), m.keys[i], m.typ, name)
		}
	}
	return nil
}

// keysInside checks, in v decoded as a value of type t, every object that
// decodes into a map whose keys encoding/json converts.
func keysInside(v any, t reflect.Type, at []placeStep) error {
	if v == nil || decodesItself(t, false).typ != nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, _ := v.(map[string]any)
		s, _ := structFields(t)
		for _, name := range slices.Sorted(maps.Keys(obj)) {
			if f := s.field(name); f != nil {
				if err := keysInside(obj[name], f.typ, with(at, placeStep{kind: exprpath.Member, name: name})); err != nil {
					return err
				}
			}
		}
	case reflect.Map:
		obj, _ := v.(map[string]any)
		if convertsKeys(t.Key()) {
			if err := (&mapSite{at: at, typ: t}).check(obj); err != nil {
				return err
			}
		}
		for _, name := range slices.Sorted(maps.Keys(obj)) {
			if err := keysInside(obj[name], t.Elem(), with(at, placeStep{kind: exprpath.Member, name: name})); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		list, _ := v.([]any)
		for i, e := range list {
			if err := keysInside(e, t.Elem(), with(at, placeStep{kind: exprpath.Index, index: i})); err != nil {
				return err
			}
		}
	}
	return nil
}

// decode returns v, the value at s, as s's type decodes it, written back
// by json.Marshal: what the handler reads there. The text it decodes is
// v's canonical JSON, the event's value there without its whitespace,
// member order and escapes.
func (s *selfSite) decode(v any) (any, error) {
	if v == nil && s.nullSkips {
		return nil, nil
	}
	text, err := keyformat.Encode(v)
	if err != nil {
		return nil, err
	}
	ptr := reflect.New(s.typ)
	if err := json.Unmarshal(text, ptr.Interface()); err != nil {
		return nil, fmt.Errorf("%s does not decode into %v: %w", s.path, s.typ, err)
	}
	out, err := keyformat.Encode(ptr.Interface())
	if err != nil {
		return nil, fmt.Errorf("%s, decoded into %v, does not encode: %w", s.path, s.typ, err)
	}
	return s.read.SearchJSON(out)
}

// selected reports whether the result value holds null at n's slot.
func (n *nullSlot) selected(value any) bool {
	switch n.slot {
	case exprpath.Whole:
		return value == nil
	case exprpath.Element:
		list, ok := value.([]any)
		return ok && n.index < len(list) && list[n.index] == nil
	case exprpath.Key:
		obj, ok := value.(map[string]any)
		if !ok {
			return false
		}
		v, ok := obj[n.name]
		return ok && v == nil
	}
	return false
}

// where names n's slot in the hashed text: null for the whole result, an
// element's index, a member's name.
func (n *nullSlot) where() any {
	switch n.slot {
	case exprpath.Element:
		return n.index
	case exprpath.Key:
		return n.name
	}
	return nil
}

// present reports whether doc holds a member or an element at at, whose
// steps are Member and Index steps.
func present(doc any, at []placeStep) bool {
	v := doc
	for _, st := range at {
		switch st.kind {
		case exprpath.Member:
			obj, ok := v.(map[string]any)
			if !ok {
				return false
			}
			if v, ok = obj[st.name]; !ok {
				return false
			}
		case exprpath.Index:
			list, ok := v.([]any)
			if !ok || st.index >= len(list) {
				return false
			}
			v = list[st.index]
		}
	}
	return true
}

// visit calls fn with each value of doc at at.
func visit(v any, at []placeStep, fn func(any)) {
	if len(at) == 0 {
		fn(v)
		return
	}
	st, rest := at[0], at[1:]
	switch st.kind {
	case exprpath.Member:
		if obj, ok := v.(map[string]any); ok {
			if x, ok := obj[st.name]; ok {
				visit(x, rest, fn)
			}
		}
	case exprpath.Index:
		if list, ok := v.([]any); ok && st.index < len(list) {
			visit(list[st.index], rest, fn)
		}
	case exprpath.Each:
		list, _ := v.([]any)
		for _, e := range list {
			visit(e, rest, fn)
		}
	case exprpath.Flatten:
		if list, ok := v.([]any); ok {
			for _, e := range list {
				visit(e, rest, fn)
			}
			return
		}
		visit(v, rest, fn)
	case exprpath.Values:
		obj, _ := v.(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(obj)) {
			if st.field == nil || st.of.field(name) == st.field {
				visit(obj[name], rest, fn)
			}
		}
	}
}

// replace returns doc with each value at at replaced by what fn makes of
// it, copying the objects and arrays on the way, so that the values that
// the strict read selected, which share them, stay as they were.
func replace(v any, at []placeStep, fn func(any) (any, error)) (any, error) {
	if len(at) == 0 {
		return fn(v)
	}
	st, rest := at[0], at[1:]
	switch st.kind {
	case exprpath.Member, exprpath.Values:
		obj, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		out := maps.Clone(obj)
		for name, x := range obj {
			if st.kind == exprpath.Member && name != st.name || st.field != nil && st.of.field(name) != st.field {
				continue
			}
			var err error
			if out[name], err = replace(x, rest, fn); err != nil {
				return nil, err
			}
		}
		return out, nil
	case exprpath.Index, exprpath.Each, exprpath.Flatten:
		list, ok := v.([]any)
		if !ok {
			if st.kind == exprpath.Flatten {
				return replace(v, rest, fn)
			}
			return v, nil
		}
		out := slices.Clone(list)
		for i, x := range list {
			if st.kind == exprpath.Index && i != st.index {
				continue
			}
			var err error
			if out[i], err = replace(x, rest, fn); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}

// sameJSON reports whether a and b are one JSON value, numbers as written.
func sameJSON(a, b any) bool {
	ta, errA := keyformat.Encode(a)
	tb, errB := keyformat.Encode(b)
	return errA == nil && errB == nil && string(ta) == string(tb)
}

// nest returns v inside objects and arrays, at the place at of members
// and indexes.
func nest(at []placeStep, v any) any {
	for i := len(at) - 1; i >= 0; i-- {
		if at[i].kind == exprpath.Member {
			v = map[string]any{at[i].name: v}
			continue
		}
		list := make([]any, at[i].index+1)
		list[len(list)-1] = v
		v = list
	}
	return v
}
