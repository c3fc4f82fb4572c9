package jmespath

import "github.com/gopowertools/lambda/internal/strictjson"

type nodeKind uint8

const (
	nField            nodeKind = iota // name
	nCurrent                          // @
	nLiteral                          // value
	nSubexpr                          // children, each applied to the result of the one before: a.b, a[0]
	nIndex                            // index, applied to the current value
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
	nMultiList                        // [children...]
	nMultiHash                        // {keys[i]: children[i], ...}
	nFunction                         // fn(children...)
	nExpref                           // &left
)

// node is one element of a compiled expression; the comments on the kinds
// say which fields each one uses.
type node struct {
	kind  nodeKind
	op    tokenKind
	pos   int // byte offset in the expression, for errors
	depth int // height of the subtree, bounded by maxDepth

	left, right *node
	cond        *node
	children    []*node

	name  string
	index int
	value any
	slice sliceSpec
	keys  []string
	fn    *Function
}

// tree is a compiled expression. It is never changed after parsing, so one
// tree can be searched from many goroutines at once.
type tree struct {
	root *node

	// strict is set on the copy of the tree that SearchJSON evaluates: a
	// field looked up in an object that holds a name folding to the
	// field's name without being it is refused, since encoding/json
	// would fill a struct field of that name from it (see strictField).
	strict bool

	// decodeLimit is the budget of a search (see WithDecodeLimit).
	decodeLimit int
	// budget is what one search decodes within: set on the copy of the
	// tree that the search evaluates (see within).
	budget *strictjson.Budget
}

// within returns a copy of t that spends from b, for one search.
func (t *tree) within(b *strictjson.Budget) *tree {
	c := *t
	c.budget = b
	return &c
}

// spend spends n bytes from the search's budget, or refuses a search that
// would go past it.
func (t *tree) spend(n int) error {
	if err := t.budget.Spend(n); err != nil {
		return tooLarge("", err)
	}
	return nil
}

type sliceSpec struct {
	start, stop, step int
	hasStart, hasStop bool
}
