package jmespath

type nodeKind uint8

const (
	nField            nodeKind = iota // a name
	nCurrent                          // @
	nLiteral                          // a value
	nSubexpr                          // left, left.next, ...: each applied to the result of the one before; right is the last; a.b, a[0]
	nIndex                            // an index, applied to the current value
	nSlice                            // a sliceSpec, applied to the current value
	nProjection                       // left is a list; right applied to each element
	nValueProjection                  // left is an object; right applied to each value
	nFilterProjection                 // left is a list; right applied to elements where cond is truthy
	nFlatten                          // left flattened one level
	nPipe                             // right applied to left's result
	nOr                               // left || right
	nAnd                              // left && right
	nNot                              // !left
	nCompare                          // left op right
	nMultiList                        // [left, left.next, ...]
	nMultiHash                        // {keys[i]: i-th of left, left.next, ...}
	nFunction                         // fn(left, left.next, ...)
	nExpref                           // &left
)

// node is one element of a compiled expression. Nodes hold no pointers:
// they refer to each other by index in [tree.nodes], and to names and values
// through the tree's side tables. The garbage collector then never scans
// the nodes, and the parser fills them in without write barriers: when
// nodes pointed at each other, that work made up much of compiling.
type node struct {
	kind  nodeKind
	op    tokenKind // nCompare
	depth uint16    // height of the subtree, bounded by maxDepth
	pos   int32     // byte offset in the expression, for errors

	// Children, as indexes in tree.nodes; 0, the unused first node, is none.
	left, right int32
	next        int32 // the following element of a chain, list or argument list

	// a and b depend on the kind; read them with the accessors below.
	a, b int32

	_ int32 // pads the node to 32 bytes, so that indexing is a shift
}

// tree is a compiled expression: its nodes and what they refer to. It is
// never changed after parsing, so one tree can be searched from many
// goroutines at once.
type tree struct {
	nodes []node // nodes[0] is unused, so that index 0 means none
	// text holds every field name: the expression itself, then the names
	// that needed unescaping, if any.
	text string
	vals []any // literal values, slice specs, hash keys and functions
	top  int32 // the root's index

	// simple reports that every node is one whose evaluation is a map
	// lookup, a bounds-checked index or a literal: nothing there can
	// panic, so Search skips the recover guard, whose cost is most of the
	// time of the short field paths that select idempotency keys.
	simple bool

	// strict is set on the copy of the tree that SearchJSON evaluates: a
	// field that is absent from an object while a case variant of its
	// name is present is refused, since encoding/json would fill a
	// struct field of that name from the variant (see searchjson.go).
	strict bool
}

// simpleKind marks the kinds tree.simple allows.
var simpleKind = [nExpref + 1]bool{
	nField: true, nCurrent: true, nIndex: true, nLiteral: true,
	nPipe: true, nSubexpr: true,
}

func (t *tree) root() *node      { return &t.nodes[t.top] }
func (t *tree) at(i int32) *node { return &t.nodes[i] }

// The meaning of a node's a and b fields, by kind.

func (t *tree) name(n *node) string          { return t.text[n.a:n.b] }          // nField
func (t *tree) lit(n *node) any              { return t.vals[n.a] }              // nLiteral
func (t *tree) sliceSpec(n *node) *sliceSpec { return t.vals[n.a].(*sliceSpec) } // nSlice
func (t *tree) cond(n *node) *node           { return &t.nodes[n.a] }            // nFilterProjection
func (t *tree) keys(n *node) []string        { return t.vals[n.a].([]string) }   // nMultiHash
func (t *tree) fn(n *node) *Function         { return t.vals[n.a].(*Function) }  // nFunction
func (n *node) count() int                   { return int(n.b) }                 // nMultiList, nMultiHash, nFunction

// index is an nIndex's index. Numbers in an expression are kept in an
// int32, clamped (see lexer.number): no array has 2^31 elements, so the
// clamped index selects what the written one would.
func (n *node) index() int { return int(n.a) }

type sliceSpec struct {
	start, stop, step int
	hasStart, hasStop bool
}
