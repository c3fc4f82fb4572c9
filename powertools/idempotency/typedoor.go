package idempotency

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/gopowertools/lambda/internal/exprpath"
	"github.com/gopowertools/lambda/jmespath"
)

// The type door: the key and the validated payload read as the handler's
// own type reads the event (docs/security.md, "The handler's type"). A
// plan per expression is made when the wrapper is built, and carried out
// on each event.

// typeDoor holds the plans of a wrapper's expressions: where its event
// must be read otherwise than by the strict read alone.
type typeDoor struct {
	key, validation *typePlan // nil: nothing to do
	compat          bool      // a Powertools mode: refuse, never read otherwise
}

// planDoor returns the plans of a wrapper of kind over argument type in,
// or nil when its expressions need none; a path that cannot be followed
// is a *ConfigError given by bad.
func planDoor(in reflect.Type, kind wrapperKind, compat Compatibility, key, validation *jmespath.Expression, bad func(option string, err error) error) (*typeDoor, error) {
	if in == nil {
		return nil, nil
	}
	view := decodedView
	if kind == funcKind {
		view = encodedView
	}
	d := &typeDoor{compat: compat != OwnFormat}
	var err error
	if d.key, err = planTypes(key, in, view, false); err != nil {
		return nil, bad("WithEventKey", fmt.Errorf("%s: %w", key, err))
	}
	if validation != nil {
		if d.validation, err = planTypes(validation, in, view, true); err != nil {
			return nil, bad("WithPayloadValidation", fmt.Errorf("%s: %w", validation, err))
		}
	}
	if d.key == nil && d.validation == nil {
		return nil, nil
	}
	return d, nil
}

// read returns the key and the validated value as the handler's type
// reads them, from what the strict read selected and the event decoded
// whole (doc).
func (d *typeDoor) read(key, validated, doc any) (any, any, error) {
	var err error
	if d.key != nil {
		if key, err = d.key.apply(doc, key, d.compat); err != nil {
			return nil, nil, err
		}
	}
	if d.validation != nil {
		if validated, err = d.validation.apply(doc, validated, d.compat); err != nil {
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

// render writes at as a JMESPath expression, for errors.
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
				b.WriteString(strconv.Quote(st.name))
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
