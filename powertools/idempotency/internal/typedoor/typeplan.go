package typedoor

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/gopowertools/lambda/internal/exprpath"
	"github.com/gopowertools/lambda/jmespath"
)

// This file works out, when a wrapper is built, how to read each of its
// expressions as encoding/json decodes the event into the handler's type
// (docs/security.md, "The handler's type"): it follows every place the
// expression reads through the type, and notes what must be checked or
// read otherwise on each event. Most types need nothing: then the plan is
// nil and a call costs nothing more.

// typePlan is what one expression needs on each event beyond the strict
// read of its bytes. The zero plan needs nothing.
type typePlan struct {
	expr *jmespath.Expression
	// maps are objects that decode into maps whose keys encoding/json
	// converts: two names that become one key, or a name that becomes a
	// key the expression looks up under another name, are refused.
	maps []mapSite
	// deep are values read whole whose type holds such maps, anywhere.
	deep []deepSite
	// selves are values that decode themselves (UnmarshalJSON,
	// UnmarshalText), which the expression reads into: it reads what
	// they decode, written back by json.Marshal.
	selves []selfSite
	// nulls are the places of the result (payload validation only)
	// where the handler's type tells a null member from an absent one.
	nulls []nullSlot
	// within is the longest path of members and indexes that every
	// place the expression reads, and every self, lies under; doc is the
	// probe of it, which selves rewrite and the expression is evaluated
	// again on.
	within []placeStep
	doc    int
}

// A site's place is at; on each event it is reached from the value of
// the probe numbered probe by the steps rest (see Door.anchor).
type mapSite struct {
	at    []placeStep
	probe int
	rest  []placeStep
	typ   reflect.Type // the map type
	names []string     // looked up in it, by the expression
	keys  []any        // their keys
}

type deepSite struct {
	at    []placeStep
	probe int
	rest  []placeStep
	typ   reflect.Type
}

type selfSite struct {
	at        []placeStep
	typ       reflect.Type // the type whose method decodes the value
	nullSkips bool         // a null leaves a nil pointer: the method never sees it
	path      string       // for errors
	// read reads json.Marshal's writing of what the type decoded, as the
	// event is read: strictly, within the decoding budget.
	read *jmespath.Expression
}

type nullSlot struct {
	slot  exprpath.SlotKind
	index int
	name  string
	at    []placeStep // Member and Index steps only
	// holder selects the object or array that holds it: at without its
	// last step.
	holder *jmespath.Expression
}

// empty reports whether p needs nothing on an event.
func (p *typePlan) empty() bool {
	return p == nil || len(p.maps)+len(p.deep)+len(p.selves)+len(p.nulls) == 0
}

// planner builds the plan of one expression.
type planner struct {
	plan *typePlan
	// dry: follow a function's result, recording no site; special is
	// set when the steps meet what the plan would have to act on.
	dry     bool
	special string
	err     error
}

// planTypes returns the plan of expr, reading the bytes that view gives
// of a value of type t; validation says that expr is the payload
// validation, whose nulls count. It fails for a path that cannot be
// followed through the type.
func planTypes(expr *jmespath.Expression, t reflect.Type, view typeView, validation bool) (*typePlan, error) {
	reads := exprpath.Of(expr)
	p := &planner{plan: &typePlan{expr: expr}}
	p.plan.within = commonPrefix(reads)
	for _, r := range reads.Reads {
		p.follow(t, true, r.Path, nil, view, false, func(end reflect.Type, at []placeStep, view typeView, tells bool) {
			if view == decodedView && end != nil && holdsKeyMaps(end) && !slices.ContainsFunc(p.plan.deep, func(d deepSite) bool {
				return d.typ == end && render(d.at) == render(at)
			}) {
				p.plan.deep = append(p.plan.deep, deepSite{at: at, typ: end})
			}
			if tells && validation && r.Slot != exprpath.Inside && len(at) > 0 && !wildcard(at) {
				p.plan.nulls = append(p.plan.nulls, nullSlot{slot: r.Slot, index: r.Index, name: r.Name, at: at})
			}
		})
		if p.err != nil {
			return nil, p.err
		}
	}
	if view == decodedView {
		for _, d := range reads.Derived {
			if err := p.derived(t, d); err != nil {
				return nil, err
			}
		}
	}
	if p.plan.empty() {
		return nil, nil
	}
	return p.plan, nil
}

// endFunc is called where a followed path ends, with the type there (nil:
// a place the type does not know, such as text the handler decodes
// itself), and whether its null differs from an absent member for the
// handler (tells). A type that decodes itself is given as it is: what is
// inside it is its own.
type endFunc func(t reflect.Type, at []placeStep, view typeView, tells bool)

// follow follows rest from a place of type t (root: the handler's
// argument itself), reached by at; elemTells says that the last step was
// into a map or a slice, whose element is there or not.
func (p *planner) follow(t reflect.Type, root bool, rest []exprpath.Step, at []placeStep, view typeView, elemTells bool, end endFunc) {
	if p.err != nil {
		return
	}
	if view == decodedView && t.Kind() != reflect.Interface {
		if d := decodesItself(t, root); d.typ != nil {
			switch {
			case len(rest) == 0:
				end(t, at, view, elemTells || d.json && !d.nullSkips)
				return
			case rest[0].Kind == exprpath.Document:
				end(nil, at, view, false) // text that the type reads as it likes
				return
			case p.dry:
				p.special = fmt.Sprintf("%v, which decodes itself", d.typ)
				return
			}
			p.plan.selves = append(p.plan.selves, selfSite{at: at, typ: d.typ, nullSkips: d.nullSkips, path: render(at)})
			if encodesItself(d.typ) {
				end(nil, at, reencodedView, false) // what it writes is its own
				return
			}
			t, view = d.typ, reencodedView
		}
	}
	ptr := false
	for t.Kind() == reflect.Pointer {
		t, ptr = t.Elem(), true
	}
	switch {
	case view != decodedView && encodesItself(t):
		end(nil, at, view, len(rest) == 0 && elemTells)
		return
	case t == rawMessageType:
		// The handler decodes its text itself; it tells null from absent.
		end(nil, at, view, len(rest) == 0 && (elemTells || view == decodedView && !ptr))
		return
	case len(rest) == 0:
		end(t, at, view, elemTells)
		return
	}
	st, rest := rest[0], rest[1:]
	if st.Kind == exprpath.Flatten {
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		p.follow(t, false, rest, with(at, placeStep{kind: exprpath.Flatten}), view, false, end)
		return
	}
	next := placeStep{kind: st.Kind, name: st.Name, index: st.Index}
	switch t.Kind() {
	case reflect.Interface:
		// encoding/json decodes JSON into it as JSON's own values,
		// whose maps and slices tell null from absent; what json.Marshal
		// writes of it depends on what it holds, which no type says.
		if view != decodedView || st.Kind == exprpath.Document {
			end(nil, at, view, false)
			return
		}
		p.follow(t, false, rest, with(at, next), view, st.Kind == exprpath.Member || st.Kind == exprpath.Index, end)
		return
	case reflect.Struct:
		s, _ := structFields(t)
		switch st.Kind {
		case exprpath.Member:
			f := s.field(st.Name)
			if view != decodedView {
				f = s.exact[st.Name] // json.Marshal writes the names as they are
			}
			if f != nil {
				p.follow(f.typ, false, rest, with(at, next), view, false, end)
				return
			}
		case exprpath.Values:
			for i := range s.fields {
				f := &s.fields[i]
				p.follow(f.typ, false, rest, with(at, placeStep{kind: exprpath.Values, field: f, of: s}), view, false, end)
			}
			return
		}
	case reflect.Map:
		converts := view == decodedView && convertsKeys(t.Key())
		switch st.Kind {
		case exprpath.Member:
			if converts {
				key, ok := mapKey(t.Key(), st.Name)
				if !ok {
					p.err = fmt.Errorf("%s looks up %q in %v, whose keys encoding/json converts, and %q becomes no key of it: no event that the handler decodes has it", render(with(at, next)), st.Name, t, st.Name)
					return
				}
				p.addMap(at, t, st.Name, key)
			}
			p.follow(t.Elem(), false, rest, with(at, next), view, true, end)
			return
		case exprpath.Values:
			if converts {
				p.addMap(at, t, "", nil)
			}
			p.follow(t.Elem(), false, rest, with(at, next), view, false, end)
			return
		}
	case reflect.Slice, reflect.Array:
		switch st.Kind {
		case exprpath.Index:
			if t.Kind() == reflect.Array && st.Index >= t.Len() {
				return // the handler drops what is past the array's end
			}
			p.follow(t.Elem(), false, rest, with(at, next), view, t.Kind() == reflect.Slice, end)
			return
		case exprpath.Each:
			p.follow(t.Elem(), false, rest, with(at, next), view, false, end)
			return
		}
	case reflect.String:
		if st.Kind == exprpath.Document {
			end(nil, at, view, false) // text the handler decodes itself
			return
		}
	}
	// The step selects nothing. In the text of an event, or in what
	// json.Marshal writes of an argument, that may be the client's
	// choice; but it is the plan that reads what a type decoded itself,
	// by a path that the type never fills.
	if view == reencodedView && !p.dry && !wildcard(at) {
		self := p.plan.selves[len(p.plan.selves)-1]
		p.err = fmt.Errorf("%s reads inside %s, which %v decodes itself (its UnmarshalJSON or UnmarshalText); the middleware reads what it decodes, and json.Marshal writes no %s there of %v: no event gives that place a value. Read %s, the value it decodes itself from, instead", render(with(at, next)), self.path, self.typ, describe(st), t, self.path)
	}
}

// describe names what step st selects.
func describe(st exprpath.Step) string {
	switch st.Kind {
	case exprpath.Member:
		return fmt.Sprintf("member %q", st.Name)
	case exprpath.Document:
		return "JSON text"
	}
	return "elements"
}

// addMap notes that the object at at decodes into the map type t, and
// that the expression looks name up in it (none for "").
func (p *planner) addMap(at []placeStep, t reflect.Type, name string, key any) {
	if p.dry {
		p.special = fmt.Sprintf("%v, whose keys encoding/json converts", t)
		return
	}
	where := render(at)
	for i := range p.plan.maps {
		m := &p.plan.maps[i]
		if m.typ == t && render(m.at) == where {
			if name != "" {
				m.names, m.keys = append(m.names, name), append(m.keys, key)
			}
			return
		}
	}
	m := mapSite{at: at, typ: t}
	if name != "" {
		m.names, m.keys = []string{name}, []any{key}
	}
	p.plan.maps = append(p.plan.maps, m)
}

// derived refuses steps into a value that a function or an operator made
// of typed places, where they could meet a map whose keys encoding/json
// converts or a type that decodes itself: where they are taken is not
// known, so the plan could not check them.
func (p *planner) derived(t reflect.Type, d exprpath.Derived) error {
	p.dry = true
	defer func() { p.dry = false }()
	for _, from := range d.From {
		var bases []reflect.Type
		p.follow(t, true, from, nil, decodedView, false, func(end reflect.Type, _ []placeStep, view typeView, _ bool) {
			if end != nil && view == decodedView {
				bases = append(bases, end)
			}
		})
		for _, base := range bases {
			for _, q := range inside(base) {
				for i := range d.Steps {
					p.special = ""
					p.follow(q, false, d.Steps[i:], nil, decodedView, false, func(reflect.Type, []placeStep, typeView, bool) {})
					if p.special != "" {
						return fmt.Errorf("it steps into a value that a function, an operator or a multi-select made from %s, and may meet %s there: the middleware cannot follow the handler's type through it; read that place by a path of fields and indexes instead", render(toPlace(from)), p.special)
					}
				}
			}
		}
	}
	return nil
}

// with returns at and one more step, in a new array.
func with(at []placeStep, st placeStep) []placeStep {
	return append(at[:len(at):len(at)], st)
}

// wildcard reports whether at selects more than one place.
func wildcard(at []placeStep) bool {
	for _, st := range at {
		if st.kind != exprpath.Member && st.kind != exprpath.Index {
			return true
		}
	}
	return false
}

// toPlace converts the steps of a path within the typed event.
func toPlace(path []exprpath.Step) []placeStep {
	out := make([]placeStep, 0, len(path))
	for _, st := range path {
		out = append(out, placeStep{kind: st.Kind, name: st.Name, index: st.Index})
	}
	return out
}

// commonPrefix returns the longest path of members and indexes that every
// place that reads reads lies under.
func commonPrefix(reads exprpath.Reads) []placeStep {
	var paths [][]exprpath.Step
	for _, r := range reads.Reads {
		paths = append(paths, r.Path)
	}
	for _, d := range reads.Derived {
		paths = append(paths, d.From...)
	}
	if len(paths) == 0 {
		return nil
	}
	n := 0
	for ; n < len(paths[0]); n++ {
		st := paths[0][n]
		if st.Kind != exprpath.Member && st.Kind != exprpath.Index || slices.ContainsFunc(paths[1:], func(p []exprpath.Step) bool { return len(p) <= n || p[n] != st }) {
			break
		}
	}
	return toPlace(paths[0][:n])
}
