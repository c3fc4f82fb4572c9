package jmespath

import (
	"slices"
	"sync"
)

// scratch is where the parser builds a tree: its nodes and side values
// go into slices reused from one Compile to the next, then are copied out
// at their exact size. A reused slice is warm in the cache, where writing
// each node into freshly allocated memory missed it; the copy needs no
// guess at how many nodes an expression makes, and a tree with many
// values costs one allocation for them, not one per doubling.
type scratch struct {
	nodes []node
	vals  []any
}

var scratches = sync.Pool{New: func() any {
	return &scratch{nodes: make([]node, 0, 64), vals: make([]any, 0, 8)}
}}

// maxPooledNodes bounds the scratch kept for reuse, so that one huge
// expression does not keep its memory alive.
const maxPooledNodes = 1 << 14

// getScratch returns empty scratch slices; nodes holds node 0, which
// stands for none.
func getScratch() *scratch {
	s := scratches.Get().(*scratch)
	s.nodes = append(s.nodes[:0], node{})
	s.vals = s.vals[:0]
	return s
}

// keep copies what the parser built out of the scratch slices, as it
// left them (perhaps grown), and gives them back to the pool.
func (s *scratch) keep(nodes []node, vals []any) ([]node, []any) {
	keptNodes := slices.Clone(nodes)
	var keptVals []any
	if len(vals) > 0 {
		keptVals = slices.Clone(vals)
	}
	s.release(nodes, vals)
	return keptNodes, keptVals
}

// release gives the scratch slices back to the pool, emptied of values so
// that the pool keeps none alive.
func (s *scratch) release(nodes []node, vals []any) {
	clear(vals)
	if cap(nodes) <= maxPooledNodes && cap(vals) <= maxPooledNodes {
		s.nodes, s.vals = nodes[:0], vals[:0]
		scratches.Put(s)
	}
}
