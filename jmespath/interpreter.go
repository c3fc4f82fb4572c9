package jmespath

import (
	"sort"
	"strings"

	"github.com/gopowertools/lambda/internal/strictjson"
)

// field evaluates c against v when c is a name, the most common node, and
// reports whether that settled it: not for another node, nor, in a strict
// tree, for a name looked up in an object (see strictField). It is
// inlined, so that a caller trying it first spares a call of eval for
// most nodes.
func (t *tree) field(c *node, v any) (any, bool) {
	if c.kind != nField {
		return nil, false
	}
	if m, ok := v.(map[string]any); ok {
		if t.strict {
			return nil, false
		}
		return m[c.name], true
	}
	return nil, true
}

// strictField looks the field n up in the object m, for a strict tree. A
// name of m that folds to n's name without being it is refused, whether
// n's name is there too or not, since encoding/json fills a struct field
// of n's name from either (see strictjson.EqualFold). m may be the
// document's or one that merge or a multi-select hash made: two requests
// that differ only there would otherwise give one key.
func (t *tree) strictField(n *node, m map[string]any) (any, error) {
	r, found := m[n.name]
	if found && len(m) == 1 {
		return r, nil
	}
	variant := ""
	for k := range m {
		// The least of several, so that the error is the same each time.
		if k != n.name && strictjson.EqualFold(k, n.name) && (variant == "" || k < variant) {
			variant = k
		}
	}
	if variant == "" {
		return r, nil
	}
	dup := &strictjson.DuplicateNameError{Offset: -1, Name: n.name, Other: variant}
	if !found {
		dup.Other, dup.Variant = "", variant
	}
	return nil, &InvalidValueError{Msg: "ambiguous JSON", Err: dup}
}

// eval evaluates n, a node of t, against the current value v. It never
// changes v or anything reachable from it, and never changes t.
func (t *tree) eval(n *node, v any) (any, error) {
	switch n.kind {
	case nField:
		if r, ok := t.field(n, v); ok {
			return r, nil
		}
		return t.strictField(n, v.(map[string]any))
	case nCurrent:
		return v, nil
	case nSubexpr:
		return t.chain(n.children, v)
	case nPipe:
		l, err := t.eval(n.left, v)
		if err != nil {
			return nil, err
		}
		return t.eval(n.right, l)
	case nIndex:
		a, ok := v.([]any)
		if !ok {
			return nil, nil
		}
		i := n.index
		if i < 0 {
			i += len(a)
		}
		if i < 0 || i >= len(a) {
			return nil, nil
		}
		return a[i], nil
	case nSlice:
		a, ok := v.([]any)
		if !ok {
			return nil, nil
		}
		return t.slice(a, n.slice)
	case nLiteral:
		return copyValue(n.value), nil
	case nProjection, nFlatten, nValueProjection, nFilterProjection:
		return t.evalProjection(n, v)
	case nOr:
		l, err := t.eval(n.left, v)
		if err != nil || truthy(l) {
			return l, err
		}
		return t.eval(n.right, v)
	case nAnd:
		l, err := t.eval(n.left, v)
		if err != nil || !truthy(l) {
			return l, err
		}
		return t.eval(n.right, v)
	case nNot:
		l, err := t.eval(n.left, v)
		if err != nil {
			return nil, err
		}
		return !truthy(l), nil
	case nCompare:
		return t.evalCompare(n, v)
	case nMultiList:
		if v == nil {
			return nil, nil
		}
		if err := t.spend(strictjson.ListCost(len(n.children))); err != nil {
			return nil, err
		}
		out := make([]any, len(n.children))
		for i, c := range n.children {
			r, err := t.eval(c, v)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case nMultiHash:
		if v == nil {
			return nil, nil
		}
		if err := t.spend(strictjson.ObjectCost(len(n.children))); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(n.children))
		for i, c := range n.children {
			r, err := t.eval(c, v)
			if err != nil {
				return nil, err
			}
			out[n.keys[i]] = r
		}
		return out, nil
	case nFunction:
		return t.evalFunction(n, v)
	case nExpref:
		return nil, &InvalidTypeError{Function: "&", Arg: 0, Want: TypeAny, Got: "expref"}
	}
	panic("jmespath: unknown node kind")
}

func (t *tree) evalProjection(n *node, v any) (any, error) {
	base, ok := t.field(n.left, v)
	if !ok {
		var err error
		if base, err = t.eval(n.left, v); err != nil {
			return nil, err
		}
	}
	var elems []any
	switch n.kind {
	case nFlatten:
		a, ok := base.([]any)
		if !ok {
			return nil, nil
		}
		size := 0
		for _, e := range a {
			if inner, ok := e.([]any); ok {
				size += len(inner)
			} else {
				size++
			}
		}
		if err := t.spend(strictjson.ListCost(size)); err != nil {
			return nil, err
		}
		out := make([]any, 0, size)
		for _, e := range a {
			if inner, ok := e.([]any); ok {
				out = append(out, inner...)
			} else {
				out = append(out, e)
			}
		}
		return out, nil
	case nValueProjection:
		m, ok := base.(map[string]any)
		if !ok {
			return nil, nil
		}
		if err := t.spend(2 * strictjson.ListCost(len(m))); err != nil { // the keys, sorted, and the values
			return nil, err
		}
		elems = sortedValues(m)
	default:
		a, ok := base.([]any)
		if !ok {
			return nil, nil
		}
		elems = a
	}
	if err := t.spend(strictjson.ListCost(len(elems))); err != nil {
		return nil, err
	}
	out := make([]any, 0, len(elems))
	for _, e := range elems {
		if n.kind == nFilterProjection {
			c, err := t.eval(n.cond, e)
			if err != nil {
				return nil, err
			}
			if !truthy(c) {
				continue
			}
		}
		r, err := t.eval(n.right, e)
		if err != nil {
			return nil, err
		}
		if r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// sortedValues returns an object's values ordered by key: Go maps keep no
// order, and a search must give the same answer every time.
func sortedValues(m map[string]any) []any {
	keys := sortedKeys(m)
	vals := make([]any, len(keys))
	for i, k := range keys {
		vals[i] = m[k]
	}
	return vals
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (t *tree) evalCompare(n *node, v any) (any, error) {
	l, err := t.eval(n.left, v)
	if err != nil {
		return nil, err
	}
	r, err := t.eval(n.right, v)
	if err != nil {
		return nil, err
	}
	switch n.op {
	case tEQ:
		return equal(l, r), nil
	case tNE:
		return !equal(l, r), nil
	}
	// Ordering is defined for two numbers or, as jmespath.py allows, two
	// strings (by code point); anything else gives null.
	c, ok := compareNumbers(l, r)
	if !ok {
		ls, lok := l.(string)
		rs, rok := r.(string)
		if !lok || !rok {
			return nil, nil
		}
		c = strings.Compare(ls, rs)
	}
	switch n.op {
	case tLT:
		return c < 0, nil
	case tLTE:
		return c <= 0, nil
	case tGT:
		return c > 0, nil
	}
	return c >= 0, nil
}

func (t *tree) evalFunction(n *node, v any) (any, error) {
	args := make([]any, len(n.children))
	for i, c := range n.children {
		if c.kind == nExpref {
			args[i] = &ExpRef{t: t, n: c.left}
			continue
		}
		r, err := t.eval(c, v)
		if err != nil {
			return nil, err
		}
		args[i] = r
	}
	return call(n.fn, args, t.budget)
}

// slice follows Python's slice semantics, as jmespath.py does.
func (t *tree) slice(a []any, s sliceSpec) ([]any, error) {
	n, step := len(a), s.step
	var start, stop int
	if step > 0 {
		start, stop = 0, n
		if s.hasStart {
			start = clampIndex(s.start, n, 0, n)
		}
		if s.hasStop {
			stop = clampIndex(s.stop, n, 0, n)
		}
	} else {
		start, stop = n-1, -1
		if s.hasStart {
			start = clampIndex(s.start, n, -1, n-1)
		}
		if s.hasStop {
			stop = clampIndex(s.stop, n, -1, n-1)
		}
	}
	// Count first: stepping an index could overflow with a huge step.
	count := 0
	if step > 0 && start < stop {
		count = (stop-start-1)/step + 1
	} else if step < 0 && start > stop {
		count = (start-stop-1)/-step + 1
	}
	if err := t.spend(strictjson.ListCost(count)); err != nil {
		return nil, err
	}
	out := make([]any, count)
	for k := range out {
		out[k] = a[start+k*step]
	}
	return out, nil
}

// clampIndex resolves a negative index against n and bounds it to [lo, hi].
func clampIndex(i, n, lo, hi int) int {
	if i < 0 {
		i += n
	}
	return max(lo, min(i, hi))
}

// copyValue copies a literal's arrays and objects, so that a caller
// changing a search result cannot change the compiled expression.
func copyValue(v any) any {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = copyValue(e)
		}
		return out
	}
	return v
}

// chain applies the elements of a subexpression, each to the result of
// the one before.
func (t *tree) chain(elems []*node, v any) (any, error) {
	var err error
	for _, c := range elems {
		if r, ok := t.field(c, v); ok {
			v = r
		} else if v, err = t.eval(c, v); err != nil {
			return nil, err
		}
	}
	return v, nil
}
