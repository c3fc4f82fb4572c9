package jmespath

type nodeKind uint8

const (
	nField            nodeKind = iota // name
	nCurrent                          // @
	nLiteral                          // lit
	nSubexpr                          // list: each applied to the result of the one before
	nIndex                            // index, applied to the current value
	nIndexExpr                        // left, then right (an nIndex) on its result
	nSlice                            // slice, applied to the current value
	nProjection                       // left is a list; right applied to each element
	nValueProjection                  // left is an object; right applied to each value
	nFilterProjection                 // left is a list; right applied to elements where cond is truthy
	nFlatten                          // left flattened one level
	nPipe                             // right applied to left's result
	nOr                               // left || right
	nAnd                              // left && right
	nNot                              // !left
	nCompare                          // left op right
	nMultiList                        // [list...]
	nMultiHash                        // {keys[i]: list[i]...}
	nFunction                         // fn(list...)
	nExpref                           // &left
)

// node is one element of a compiled expression. It is never changed after
// parsing, so one tree can be searched from many goroutines at once.
type node struct {
	kind  nodeKind
	op    tokenKind  // nCompare
	depth uint16     // height of the subtree, bounded by maxDepth
	pos   int32      // byte offset in the expression, for errors
	name  string     // nField, nFunction
	index int        // nIndex
	slice *sliceSpec // nSlice
	lit   any        // nLiteral
	left  *node
	right *node
	cond  *node // nFilterProjection
	list  []*node
	keys  []string // nMultiHash
	fn    *Function
}

type sliceSpec struct {
	start, stop, step int
	hasStart, hasStop bool
}
