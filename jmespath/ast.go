package jmespath

import "strings"

type nodeKind uint8

const (
	nField            nodeKind = iota // name
	nCurrent                          // @
	nLiteral                          // lit
	nSubexpr                          // left, left.next, ...: each applied to the result of the one before; right is the last
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
	nFunction                         // fn(left, left.next, ...); index is the count
	nExpref                           // &left
)

// node is one element of a compiled expression. It is never changed after
// parsing, so one tree can be searched from many goroutines at once.
type node struct {
	kind  nodeKind
	op    tokenKind // nCompare
	depth uint16    // height of the subtree, bounded by maxDepth
	pos   int32     // byte offset in the expression, for errors
	name  string    // nField, nFunction
	index int       // nIndex
	lit   any       // see below
	left  *node
	right *node
	next  *node // the following element of a chain, list or argument list
}

// lit holds what only some kinds need, to keep nodes small: the value of an
// nLiteral, and for other kinds the values these accessors return.
func (n *node) sliceSpec() *sliceSpec { return n.lit.(*sliceSpec) } // nSlice
func (n *node) cond() *node           { return n.lit.(*node) }      // nFilterProjection
func (n *node) keys() []string        { return n.lit.([]string) }   // nMultiHash
func (n *node) fn() *Function         { return n.lit.(*Function) }  // nFunction

type sliceSpec struct {
	start, stop, step int
	hasStart, hasStop bool
}

// estimateNodes guesses how many nodes src will need, so that the arena is
// usually allocated once and not much too large: about one per name,
// operator, bracket or literal.
func estimateNodes(src string) int {
	n := 2
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '[':
			switch {
			case strings.HasPrefix(src[i:], "[*]"): // a projection
				n++
				i += 2
			case strings.HasPrefix(src[i:], "[?"): // a filter
				n++
			default: // an index, a slice, a flatten or a list
				n += 2
			}
		case '*', '(', '{', '@', '|', '&', '!', '<', '>', '=':
			n++
		case '"', '\'', '`':
			n++
			for i++; i < len(src) && src[i] != c; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		default:
			if isIdentStart(c) {
				n++
				for i+1 < len(src) && isIdentPart(src[i+1]) {
					i++
				}
			}
		}
	}
	return n
}
