package jmespath

import "github.com/gopowertools/lambda/internal/exprpath"

// This file tells the idempotency middleware where in a document an
// expression reads (see internal/exprpath), so that it can follow each
// place through a handler's Go type when the handler is built.

func init() {
	exprpath.Of = func(e any) exprpath.Reads { return e.(*Expression).reads() }
}

// reads walks the expression's tree once, following the places of the
// document that each node's value comes from.
func (e *Expression) reads() exprpath.Reads {
	var w readWalk
	w.consume(w.walk(e.tree.root, place{kind: atDoc}, true), exprpath.Whole, 0, "")
	return w.out
}

// placeKind is what the walk knows of a node's value.
type placeKind uint8

const (
	atNothing placeKind = iota // a value not taken from the document: a literal, a boolean, null
	atDoc                      // the document's value at path
	atList                     // a list made by a projection, whose elements are at path
	atMade                     // a value that a function or an operator made from the values at from
)

// place is where a node's value comes from.
type place struct {
	kind  placeKind
	path  []exprpath.Step   // atDoc, atList
	from  [][]exprpath.Step // atMade
	steps []exprpath.Step   // atMade: the steps taken into the made value
}

type readWalk struct {
	out exprpath.Reads
}

// with returns path and one more step, in a new array.
func with(path []exprpath.Step, st ...exprpath.Step) []exprpath.Step {
	return append(path[:len(path):len(path)], st...)
}

// step returns the place of a step into the value at p.
func (p place) step(st exprpath.Step) place {
	switch p.kind {
	case atDoc:
		return place{kind: atDoc, path: with(p.path, st)}
	case atMade:
		return place{kind: atMade, from: p.from, steps: with(p.steps, st)}
	}
	return place{}
}

// elements returns the place of the elements of the value at p that a
// projection iterates: each element of an array (each), or each value of
// an object.
func (p place) elements(each exprpath.StepKind) place {
	switch p.kind {
	case atDoc, atMade:
		return p.step(exprpath.Step{Kind: each})
	case atList:
		if each == exprpath.Each {
			return place{kind: atDoc, path: p.path}
		}
	}
	return place{}
}

// sources returns the places of the document that the value at p holds.
func (p place) sources() [][]exprpath.Step {
	switch p.kind {
	case atDoc, atList:
		return [][]exprpath.Step{p.path}
	case atMade:
		return p.from
	}
	return nil
}

// made returns the place of a value made from the values at ps.
func made(ps ...place) place {
	var from [][]exprpath.Step
	for _, p := range ps {
		from = append(from, p.sources()...)
	}
	if len(from) == 0 {
		return place{}
	}
	return place{kind: atMade, from: from}
}

// consume records that the value at p is read whole, at slot of the
// result.
func (w *readWalk) consume(p place, slot exprpath.SlotKind, index int, name string) {
	switch p.kind {
	case atDoc:
		w.out.Reads = append(w.out.Reads, exprpath.Read{Path: p.path, Slot: slot, Index: index, Name: name})
	case atList:
		w.out.Reads = append(w.out.Reads, exprpath.Read{Path: p.path, Slot: exprpath.Inside})
	case atMade:
		if len(p.steps) > 0 {
			w.out.Derived = append(w.out.Derived, exprpath.Derived{From: p.from, Steps: p.steps})
		}
	}
}

// walk returns the place of n's value on the current value at cur. top
// says that n makes the expression's result, so that the elements of a
// multi-select there are read at their slots.
func (w *readWalk) walk(n *node, cur place, top bool) place {
	switch n.kind {
	case nCurrent:
		return cur
	case nField:
		if cur.kind == atList {
			return place{} // a field of a list is null
		}
		return cur.step(exprpath.Step{Kind: exprpath.Member, Name: n.name})
	case nIndex:
		if cur.kind == atList {
			return place{kind: atDoc, path: cur.path}
		}
		if n.index < 0 {
			return cur.step(exprpath.Step{Kind: exprpath.Each})
		}
		return cur.step(exprpath.Step{Kind: exprpath.Index, Index: n.index})
	case nSlice:
		if cur.kind == atList {
			return cur
		}
		return listOf(cur.elements(exprpath.Each))
	case nSubexpr:
		for i, c := range n.children {
			cur = w.walk(c, cur, top && i == len(n.children)-1)
		}
		return cur
	case nPipe:
		return w.walk(n.right, w.walk(n.left, cur, false), top)
	case nProjection, nValueProjection, nFilterProjection:
		each := exprpath.Each
		if n.kind == nValueProjection {
			each = exprpath.Values
		}
		elem := w.walk(n.left, cur, false).elements(each)
		if n.cond != nil {
			w.consume(w.walk(n.cond, elem, false), exprpath.Inside, 0, "")
		}
		return listOf(w.walk(n.right, elem, false))
	case nFlatten:
		left := w.walk(n.left, cur, false)
		if left.kind == atList {
			return place{kind: atList, path: with(left.path, exprpath.Step{Kind: exprpath.Flatten})}
		}
		return listOf(left.elements(exprpath.Each).step(exprpath.Step{Kind: exprpath.Flatten}))
	case nOr, nAnd:
		l, r := w.walk(n.left, cur, false), w.walk(n.right, cur, false)
		w.consume(l, exprpath.Inside, 0, "")
		w.consume(r, exprpath.Inside, 0, "")
		return made(l, r)
	case nNot, nCompare:
		for _, c := range []*node{n.left, n.right} {
			if c != nil {
				w.consume(w.walk(c, cur, false), exprpath.Inside, 0, "")
			}
		}
		return place{}
	case nMultiList, nMultiHash:
		var ps []place
		for i, c := range n.children {
			p := w.walk(c, cur, false)
			switch {
			case top && n.kind == nMultiList:
				w.consume(p, exprpath.Element, i, "")
			case top:
				w.consume(p, exprpath.Key, 0, n.keys[i])
			default:
				w.consume(p, exprpath.Inside, 0, "")
			}
			ps = append(ps, p)
		}
		return made(ps...)
	case nFunction:
		return w.function(n, cur)
	}
	return place{} // a literal, or an expression reference out of place
}

// listOf returns the place of a list whose elements are at elem.
func listOf(elem place) place {
	switch elem.kind {
	case atDoc, atList:
		return place{kind: atList, path: elem.path}
	case atMade:
		return elem
	}
	return place{}
}

// function returns the place of a function's result. powertools_json
// goes on into the document held in a string; any other function reads
// its arguments whole, and its expression references on their elements.
func (w *readWalk) function(n *node, cur place) place {
	if n.fn == powertoolsJSON && len(n.children) == 1 {
		arg := w.walk(n.children[0], cur, false)
		if arg.kind == atDoc {
			return arg.step(exprpath.Step{Kind: exprpath.Document})
		}
		w.consume(arg, exprpath.Inside, 0, "")
		return made(arg)
	}
	var args []place
	for _, c := range n.children {
		if c.kind != nExpref {
			args = append(args, w.walk(c, cur, false))
		}
	}
	for _, a := range args {
		w.consume(a, exprpath.Inside, 0, "")
	}
	for _, c := range n.children {
		if c.kind != nExpref {
			continue
		}
		for _, a := range args {
			w.consume(w.walk(c.left, a.elements(exprpath.Each), false), exprpath.Inside, 0, "")
		}
	}
	return made(args...)
}
