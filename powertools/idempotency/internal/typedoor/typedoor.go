// Package typedoor reads the key and the validated payload of an event as
// the handler's own type reads it (docs/security.md, "The handler's
// type"), and checks the types of a wrapped function. A plan per
// expression is made when the wrapper is built, from encoding/json's
// rules about Go types, and carried out on each event.
//
// It is the idempotency package's, apart so that the middleware's state
// machine reads on its own: the middleware hands it the expressions and
// the type once, and the values its strict read selected on each event.
package typedoor

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/gopowertools/lambda/internal/exprpath"
	"github.com/gopowertools/lambda/internal/keyformat"
	"github.com/gopowertools/lambda/jmespath"
)

// Door holds the plans of a wrapper's expressions: where its event must
// be read otherwise than by the strict read alone.
type Door struct {
	key, validation *typePlan // nil: nothing to do
	compat          bool      // a Powertools mode: refuse, never read otherwise
	// Probes are the places of the event that the plans read, for the
	// middleware to evaluate in its one strict read beside the
	// expressions, and to give back to Read: paths of members and
	// indexes, so that a read that follows paths still decodes only what
	// they select ("@" only for a plan that must read the event whole).
	Probes []*jmespath.Expression
	// compile compiles a probe as the expressions are compiled: within
	// their decoding budget.
	compile func(string) *jmespath.Expression
}

// Wrapper is what a door is planned for.
type Wrapper struct {
	In reflect.Type // the wrapped function's argument type
	// Function says that the event is json.Marshal's writing of a
	// function's argument, not an event that the handler decodes.
	Function bool
	// Compat says that the keys are a Powertools runtime's, which the
	// door never reads otherwise than that runtime: it refuses the event
	// instead.
	Compat          bool
	Key, Validation *jmespath.Expression // Validation nil: none
	// JMESPath are the options the expressions were compiled with, which
	// the plans' own are compiled with too.
	JMESPath []jmespath.Option
}

// Plan returns the plans of w's expressions, or nil when they need none.
// A path that cannot be followed through the type is a
// *jmespath.ExpressionError naming its expression.
func Plan(w Wrapper) (*Door, error) {
	if w.In == nil {
		return nil, nil
	}
	in, key, validation := w.In, w.Key, w.Validation
	view := decodedView
	if w.Function {
		view = encodedView
	}
	d := &Door{compat: w.Compat, compile: func(text string) *jmespath.Expression {
		x, err := jmespath.Compile(text, w.JMESPath...)
		if err != nil {
			panic(err) // a path of members and indexes, rendered here, always compiles
		}
		return x
	}}
	var err error
	if d.key, err = planTypes(key, in, view, false); err != nil {
		return nil, &jmespath.ExpressionError{Expression: key, Err: err}
	}
	if validation != nil {
		if d.validation, err = planTypes(validation, in, view, true); err != nil {
			return nil, &jmespath.ExpressionError{Expression: validation, Err: err}
		}
	}
	if d.key == nil && d.validation == nil {
		return nil, nil
	}
	for _, p := range []*typePlan{d.key, d.validation} {
		if p != nil {
			d.anchor(p)
		}
	}
	return d, nil
}

// anchor gives each site of p the probe it reads from: the longest prefix
// of its place that selects one value, from which the rest of its steps
// are followed.
func (d *Door) anchor(p *typePlan) {
	split := func(at []placeStep) (int, []placeStep) {
		k := 0
		for k < len(at) && (at[k].kind == exprpath.Member || at[k].kind == exprpath.Index) {
			k++
		}
		return d.probe(at[:k]), at[k:]
	}
	for i := range p.maps {
		p.maps[i].probe, p.maps[i].rest = split(p.maps[i].at)
	}
	for i := range p.deep {
		p.deep[i].probe, p.deep[i].rest = split(p.deep[i].at)
	}
	for i := range p.nulls {
		// Read only for a null, which is rare: not a probe.
		p.nulls[i].holder = d.compile(render(p.nulls[i].at[:len(p.nulls[i].at)-1]))
	}
	if len(p.selves) > 0 {
		whole := d.compile("@")
		for i := range p.selves {
			p.selves[i].read = whole
		}
		// A self lies on the way to a place the expression reads: within
		// ends before it, in what holds it, where an absent self (which
		// its type never sees) differs from a null one (which it may).
		for _, s := range p.selves {
			n := 0
			for n < len(p.within) && n < len(s.at)-1 && samePlace(p.within[n], s.at[n]) {
				n++
			}
			p.within = p.within[:n]
		}
		p.doc = d.probe(p.within)
	}
}

// samePlace reports whether two steps of members and indexes select the
// same place.
func samePlace(a, b placeStep) bool {
	return a.kind == b.kind && a.name == b.name && a.index == b.index && a.field == nil && b.field == nil
}

// probe returns the index of the probe of the place at, a path of
// members and indexes, adding it if it is new.
func (d *Door) probe(at []placeStep) int {
	text := render(at)
	for i, x := range d.Probes {
		if x.String() == text {
			return i
		}
	}
	d.Probes = append(d.Probes, d.compile(text))
	return len(d.Probes) - 1
}

// Read returns the key and the validated value as the handler's type
// reads them in the event payload, from what the strict read selected and
// the values of the probes. An event that the type reads otherwise than
// the expression can say is refused with a *jmespath.ExpressionError
// naming the expression.
func (d *Door) Read(payload []byte, key, validated any, probes []any) (any, any, error) {
	var err error
	if d.key != nil {
		if key, err = d.key.apply(payload, probes, key, d.compat); err != nil {
			return nil, nil, err
		}
	}
	if d.validation != nil {
		if validated, err = d.validation.apply(payload, probes, validated, d.compat); err != nil {
			return nil, nil, err
		}
	}
	return key, validated, nil
}

// typeView is how the bytes the middleware reads stand to the type.
type typeView uint8

const (
	// decodedView: the handler decodes the bytes into the type (Wrap, New).
	decodedView typeView = iota
	// encodedView: the bytes are json.Marshal's writing of a value of
	// the type (WrapFunc's argument).
	encodedView
	// reencodedView: the value is json.Marshal's writing of what a type
	// decoded itself, which the plan reads in place of the event's text.
	reencodedView
)

// placeStep is one step to a place of the decoded event, as a plan
// follows it on each event.
type placeStep struct {
	kind  exprpath.StepKind // Member, Index, Each, Flatten or Values
	name  string
	index int
	// For Values over a struct: only the members that fill field.
	field *jsonField
	of    *jsonStruct
}

// render writes at as a JMESPath expression: for errors, and, for a path
// of members and indexes, as a probe to compile.
func render(at []placeStep) string {
	var b strings.Builder
	for _, st := range at {
		switch st.kind {
		case exprpath.Member:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			if plainName(st.name) {
				b.WriteString(st.name)
			} else {
				quoted, _ := keyformat.Encode(st.name) // a JSON string is a quoted identifier
				b.Write(quoted)
			}
		case exprpath.Index:
			fmt.Fprintf(&b, "[%d]", st.index)
		case exprpath.Each:
			b.WriteString("[*]")
		case exprpath.Flatten:
			b.WriteString("[]")
		case exprpath.Values:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteByte('*')
		case exprpath.Document:
			return "powertools_json(" + b.String() + ")"
		}
	}
	if b.Len() == 0 {
		return "@"
	}
	return b.String()
}

// plainName reports whether name is a JMESPath identifier without quotes.
func plainName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, c := range name {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
