// Package template reads a SAM or CloudFormation template (YAML or JSON)
// for what the idempotency command needs: the resources, their properties,
// and the references between them. It resolves the intrinsic functions
// that name a resource or a parameter (Ref, Fn::GetAtt, and Fn::Sub
// without variables, in the short !Tag form or the long one) and leaves
// every other value unresolved, which callers treat as unknown.
package template

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Template is a parsed template.
type Template struct {
	root      *yaml.Node
	resources map[string]*Resource
	// IDs are the logical IDs of the resources, in the template's order.
	IDs []string
}

// Resource is one entry of the template's Resources.
type Resource struct {
	ID   string
	Type string
	// Properties and Metadata are the resource's sections, or nil.
	Properties *yaml.Node
	Metadata   *yaml.Node
}

// Read parses the template at path.
func Read(path string) (*Template, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse parses a template. One without a Resources mapping is an error.
func Parse(raw []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("not a template: the document is not a mapping")
	}
	t := &Template{root: doc.Content[0], resources: map[string]*Resource{}}
	res := Lookup(t.root, "Resources")
	if res == nil || res.Kind != yaml.MappingNode {
		return nil, errors.New("not a template: no Resources mapping")
	}
	for i := 0; i+1 < len(res.Content); i += 2 {
		id, n := res.Content[i].Value, res.Content[i+1]
		r := &Resource{
			ID:         id,
			Type:       scalar(Lookup(n, "Type")),
			Properties: Lookup(n, "Properties"),
			Metadata:   Lookup(n, "Metadata"),
		}
		t.resources[id] = r
		t.IDs = append(t.IDs, id)
	}
	return t, nil
}

// Resource returns the resource id, or nil.
func (t *Template) Resource(id string) *Resource { return t.resources[id] }

// Globals returns the template's Globals section for kind ("Function"),
// or nil.
func (t *Template) Globals(kind string) *yaml.Node { return Lookup(t.root, "Globals", kind) }

// Prop follows keys through the resource's Properties; nil when one is
// missing.
func (r *Resource) Prop(keys ...string) *yaml.Node { return Lookup(r.Properties, keys...) }

// Lookup follows keys through mappings from n; nil when one is missing.
func Lookup(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

// Entries returns the keys and values of a mapping, in order.
func Entries(n *yaml.Node) (keys []string, values []*yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys = append(keys, n.Content[i].Value)
		values = append(values, n.Content[i+1])
	}
	return keys, values
}

// Items returns the elements of a sequence, or n alone when it is not one
// (CloudFormation takes a single value where it takes a list, in many
// places).
func Items(n *yaml.Node) []*yaml.Node {
	switch {
	case n == nil:
		return nil
	case n.Kind == yaml.SequenceNode:
		return n.Content
	}
	return []*yaml.Node{n}
}

// intrinsic returns the function name and argument of an intrinsic
// function call, in the short form (!GetAtt X.Arn) or the long one
// ({"Fn::GetAtt": ["X", "Arn"]}), with the long name ("Ref", "Fn::GetAtt",
// "Fn::Sub"); "" when n is not one.
func intrinsic(n *yaml.Node) (string, *yaml.Node) {
	if n == nil {
		return "", nil
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		name := strings.TrimPrefix(n.Tag, "!")
		if name != "Ref" && name != "Condition" {
			name = "Fn::" + name
		}
		return name, n
	}
	if n.Kind == yaml.MappingNode && len(n.Content) == 2 {
		if k := n.Content[0].Value; k == "Ref" || strings.HasPrefix(k, "Fn::") {
			return k, n.Content[1]
		}
	}
	return "", nil
}

// Ref returns the logical ID of the resource that n names with Ref or
// Fn::GetAtt (any attribute), or with Fn::Sub of exactly "${ID}" or
// "${ID.Attr}"; "" when n names no resource of the template. attr is the
// attribute of a GetAtt, "" for a Ref.
func (t *Template) Ref(n *yaml.Node) (id, attr string) {
	fn, arg := intrinsic(n)
	switch fn {
	case "Ref":
		id = scalar(arg)
	case "Fn::GetAtt":
		if arg.Kind == yaml.SequenceNode && len(arg.Content) == 2 {
			id, attr = scalar(arg.Content[0]), scalar(arg.Content[1])
		} else {
			id, attr, _ = strings.Cut(scalar(arg), ".")
		}
	case "Fn::Sub":
		s := scalar(arg)
		if !strings.HasPrefix(s, "${") || !strings.HasSuffix(s, "}") || strings.Count(s, "${") != 1 {
			return "", ""
		}
		id, attr, _ = strings.Cut(s[2:len(s)-1], ".")
	}
	if t.resources[id] == nil {
		return "", ""
	}
	return id, attr
}

// RefName returns the name that n refers to with Ref, whether or not the
// template defines it (SAM makes some resources when it deploys, such as
// a function's role, <ID>Role), or "".
func RefName(n *yaml.Node) string {
	if fn, arg := intrinsic(n); fn == "Ref" {
		return scalar(arg)
	}
	return ""
}

// String returns the value of n as a string: a scalar, a Ref to a
// parameter (its Default), or an Fn::Sub without variables. ok is false
// for anything else, such as a reference to a resource, whose value is
// known only once deployed.
func (t *Template) String(n *yaml.Node) (s string, ok bool) {
	if n == nil {
		return "", false
	}
	fn, arg := intrinsic(n)
	switch fn {
	case "":
		if n.Kind != yaml.ScalarNode {
			return "", false
		}
		return n.Value, true
	case "Ref":
		if d := Lookup(t.root, "Parameters", scalar(arg), "Default"); d != nil {
			return t.String(d)
		}
	case "Fn::Sub":
		if v := scalar(arg); arg.Kind == yaml.ScalarNode && !strings.Contains(v, "${") {
			return v, true
		}
	}
	return "", false
}

// Sub returns the string of an Fn::Sub (the first element of its list
// form), variables unresolved.
func (t *Template) Sub(n *yaml.Node) (string, bool) {
	fn, arg := intrinsic(n)
	if fn != "Fn::Sub" {
		return "", false
	}
	if arg.Kind == yaml.SequenceNode && len(arg.Content) > 0 {
		arg = arg.Content[0]
	}
	if arg.Kind != yaml.ScalarNode {
		return "", false
	}
	return arg.Value, true
}

// Int returns the value of n as a whole number (see [Template.String]).
func (t *Template) Int(n *yaml.Node) (int, bool) {
	s, ok := t.String(n)
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	return v, err == nil
}

// Bool returns the value of n as a boolean, as CloudFormation reads one
// (true or false in any case).
func (t *Template) Bool(n *yaml.Node) (value, ok bool) {
	s, ok := t.String(n)
	if !ok {
		return false, false
	}
	switch strings.ToLower(s) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// Describe writes n briefly, as a template writes it: a scalar's value,
// or an intrinsic function in its short form with its argument
// ("!Ref IdempotencyTable", "!GetAtt Table.Arn", "!Sub ${AWS::StackName}-x").
func Describe(n *yaml.Node) string {
	fn, arg := intrinsic(n)
	short := "!" + strings.TrimPrefix(fn, "Fn::")
	switch {
	case n == nil:
		return "nothing"
	case fn == "" && n.Kind == yaml.ScalarNode:
		return n.Value
	case fn == "":
		return "a structure"
	case arg.Kind == yaml.ScalarNode:
		return short + " " + arg.Value
	case fn == "Fn::GetAtt" && arg.Kind == yaml.SequenceNode && len(arg.Content) == 2:
		return short + " " + scalar(arg.Content[0]) + "." + scalar(arg.Content[1])
	case fn == "Fn::Sub" && arg.Kind == yaml.SequenceNode && len(arg.Content) > 0:
		return short + " " + scalar(arg.Content[0])
	}
	return short + " ..."
}
