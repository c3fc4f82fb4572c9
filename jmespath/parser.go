package jmespath

// The parser is a top-down operator precedence (Pratt) parser that follows
// jmespath.py's grammar and binding powers, so that precedence matches the
// reference implementation exactly. It is a little stricter than
// jmespath.py where that one accepts by accident: function arguments,
// multi-select entries and hash pairs must be separated by commas, and each
// slice part holds at most one number.

// maxDepth bounds both the parser's recursion and the height of the tree,
// so that neither parsing nor searching can exhaust the stack.
const maxDepth = 256

// projectionStop: tokens that bind less tightly end a projection's right side.
const projectionStop = 10

var bindingPower = [...]int{
	tPipe: 1, tOr: 2, tAnd: 3,
	tEQ: 5, tNE: 5, tLT: 5, tLTE: 5, tGT: 5, tGTE: 5,
	tFlatten: 9, tStar: 20, tFilter: 21, tDot: 40, tNot: 45,
	tLbrace: 50, tLbracket: 55, tIndex: 55, tLparen: 60,
	tEOF: 0,
}

// parser reads tokens from its lexer as it goes, with one token of
// lookahead, so that no token list is built.
type parser struct {
	src    string
	lx     lexer
	tok    token // the current token
	next   token // the one after it
	depth  int
	nodes  []node // see node; scratch (see scratch.go) while parsing
	names  []byte // the names that needed unescaping, for tree.text
	simple bool   // no node so far is outside simpleKind; see tree.simple
	fns    functionTable
}

// parse parses src into a tree.
func parse(src string, fns functionTable) (tree, error) {
	s := getScratch()
	p := parser{src: src, lx: lexer{src: src, vals: s.vals}, nodes: s.nodes, fns: fns, simple: true}
	p.next = p.lx.scan()
	p.advance()
	top, err := p.expression(0)
	if err == nil && p.cur() != tEOF {
		err = p.unexpected()
	}
	if err != nil {
		s.release(p.nodes, p.lx.vals)
		return tree{}, err
	}
	t := tree{text: src, top: top, simple: p.simple}
	t.nodes, t.vals = s.keep(p.nodes, p.lx.vals)
	if len(p.names) > 0 {
		t.text += string(p.names)
	}
	return t, nil
}

func (p *parser) advance() {
	p.tok = p.next
	if p.next.kind != tEOF && p.next.kind != tError {
		p.next = p.lx.scan()
	}
}

func (p *parser) cur() tokenKind { return p.tok.kind }

// errorAt reports a syntax error; when the parser stands on a token the
// lexer could not read, the lexer's error is the one to report.
func (p *parser) errorAt(pos int32, msg string) error {
	if p.tok.kind == tError {
		return p.lx.err
	}
	return &SyntaxError{Expression: p.src, Offset: int(pos), Msg: msg}
}

func (p *parser) unexpected() error {
	t := p.tok
	return p.errorAt(t.pos, "unexpected "+t.kind.String())
}

func (p *parser) match(k tokenKind) error {
	if p.cur() != k {
		t := p.tok
		return p.errorAt(t.pos, "expected "+k.String()+", found "+t.kind.String())
	}
	p.advance()
	return nil
}

// add appends n to the arena and returns its index. n's children are
// already there, so its height can be checked now: at least the one n
// comes with, and above its left and right children. Nodes are appended by
// value and hold no pointers: growing the arena is a plain copy, and the
// parser keeps indexes, never pointers, across calls that add nodes.
func (p *parser) add(n node) (int32, error) {
	n.depth = max(n.depth, p.height(n.left), p.height(n.right))
	if n.kind == nFilterProjection {
		n.depth = max(n.depth, p.height(n.a))
	}
	if n.depth > maxDepth {
		return 0, p.errorAt(n.pos, "expression nested too deeply")
	}
	p.simple = p.simple && simpleKind[n.kind]
	p.nodes = append(p.nodes, n)
	return int32(len(p.nodes) - 1), nil
}

// height is the depth a parent of node i has at least.
func (p *parser) height(i int32) uint16 {
	if i == 0 {
		return 0
	}
	return p.nodes[i].depth + 1
}

func (p *parser) leaf(kind nodeKind, pos int32) (int32, error) {
	return p.add(node{kind: kind, pos: pos})
}

func (p *parser) binary(kind nodeKind, pos int32, left, right int32) (int32, error) {
	return p.add(node{kind: kind, pos: pos, left: left, right: right})
}

func (p *parser) expression(bp int) (int32, error) {
	if p.depth++; p.depth > maxDepth {
		return 0, p.errorAt(p.tok.pos, "expression nested too deeply")
	}
	tok := p.tok
	p.advance()
	left, err := p.nud(tok)
	for err == nil && bp < bindingPower[p.cur()] {
		tok = p.tok
		p.advance()
		left, err = p.led(tok, left)
	}
	p.depth--
	return left, err
}

func (p *parser) nud(tok token) (int32, error) {
	switch tok.kind {
	case tLiteral:
		return p.add(node{kind: nLiteral, pos: tok.pos, a: tok.val})
	case tUnquoted:
		return p.field(tok)
	case tQuoted:
		if p.cur() == tLparen {
			return 0, p.errorAt(tok.pos, "a quoted identifier cannot name a function")
		}
		return p.field(tok)
	case tStar:
		left, err := p.leaf(nCurrent, tok.pos)
		if err != nil {
			return 0, err
		}
		var right int32
		if p.cur() == tRbracket {
			right, err = p.leaf(nCurrent, tok.pos)
		} else {
			right, err = p.projectionRHS(bindingPower[tStar])
		}
		if err != nil {
			return 0, err
		}
		return p.binary(nValueProjection, tok.pos, left, right)
	case tFilter:
		cur, err := p.leaf(nCurrent, tok.pos)
		if err != nil {
			return 0, err
		}
		return p.filter(tok, cur)
	case tLbrace:
		return p.multiHash(tok)
	case tLparen:
		n, err := p.expression(0)
		if err != nil {
			return 0, err
		}
		return n, p.match(tRparen)
	case tFlatten:
		cur, err := p.leaf(nCurrent, tok.pos)
		if err != nil {
			return 0, err
		}
		return p.flatten(tok, cur)
	case tNot:
		operand, err := p.expression(bindingPower[tNot])
		if err != nil {
			return 0, err
		}
		return p.binary(nNot, tok.pos, operand, 0)
	case tLbracket:
		switch {
		case p.cur() == tNumber || p.cur() == tColon:
			return p.indexOrSlice(tok, 0)
		case p.cur() == tStar && p.next.kind == tRbracket:
			p.advance()
			p.advance()
			cur, err := p.leaf(nCurrent, tok.pos)
			if err != nil {
				return 0, err
			}
			return p.projection(tok, cur, bindingPower[tStar])
		}
		return p.multiList(tok)
	case tIndex:
		return p.add(node{kind: nIndex, pos: tok.pos, a: tok.val})
	case tCurrent:
		return p.leaf(nCurrent, tok.pos)
	case tExpref:
		operand, err := p.expression(0)
		if err != nil {
			return 0, err
		}
		return p.binary(nExpref, tok.pos, operand, 0)
	case tEOF:
		return 0, p.errorAt(tok.pos, "incomplete expression")
	}
	return 0, p.errorAt(tok.pos, "unexpected "+tok.kind.String())
}

// field makes the node of a name: its text in the expression, or, for a
// quoted name that needed unescaping, appended to p.names.
func (p *parser) field(tok token) (int32, error) {
	n := node{kind: nField, pos: tok.pos, a: tok.pos, b: tok.end}
	switch {
	case tok.val >= 0:
		n.a = int32(len(p.src) + len(p.names))
		p.names = append(p.names, p.lx.vals[tok.val].(string)...)
		n.b = int32(len(p.src) + len(p.names))
	case tok.kind == tQuoted:
		n.a, n.b = tok.pos+1, tok.end-1
	}
	return p.add(n)
}

// nameOf returns the name of an nField node.
func (p *parser) nameOf(n *node) string {
	if int(n.a) < len(p.src) {
		return p.src[n.a:n.b]
	}
	return string(p.names[int(n.a)-len(p.src) : int(n.b)-len(p.src)])
}

func (p *parser) led(tok token, left int32) (int32, error) {
	switch tok.kind {
	case tDot:
		if p.cur() == tStar {
			p.advance()
			right, err := p.projectionRHS(bindingPower[tDot])
			if err != nil {
				return 0, err
			}
			return p.binary(nValueProjection, tok.pos, left, right)
		}
		right, err := p.dotRHS(bindingPower[tDot])
		if err != nil {
			return 0, err
		}
		return p.subexpr(tok.pos, left, right)
	case tPipe, tOr, tAnd:
		right, err := p.expression(bindingPower[tok.kind])
		if err != nil {
			return 0, err
		}
		kind := nPipe
		switch tok.kind {
		case tOr:
			kind = nOr
		case tAnd:
			kind = nAnd
		}
		return p.binary(kind, tok.pos, left, right)
	case tEQ, tNE, tLT, tLTE, tGT, tGTE:
		right, err := p.expression(bindingPower[tok.kind])
		if err != nil {
			return 0, err
		}
		return p.add(node{kind: nCompare, op: tok.kind, pos: tok.pos, left: left, right: right})
	case tLparen:
		return p.function(tok, left)
	case tIndex:
		idx, err := p.add(node{kind: nIndex, pos: tok.pos, a: tok.val})
		if err != nil {
			return 0, err
		}
		return p.subexpr(tok.pos, left, idx)
	case tFilter:
		return p.filter(tok, left)
	case tFlatten:
		return p.flatten(tok, left)
	case tLbracket:
		if p.cur() == tNumber || p.cur() == tColon {
			return p.indexOrSlice(tok, left)
		}
		if err := p.match(tStar); err != nil {
			return 0, err
		}
		if err := p.match(tRbracket); err != nil {
			return 0, err
		}
		return p.projection(tok, left, bindingPower[tStar])
	}
	return 0, p.errorAt(tok.pos, "unexpected "+tok.kind.String())
}

// subexpr joins left and right into one chain, evaluated in order, so
// that a.b.c and a[0][1] make flat chains rather than deep trees.
func (p *parser) subexpr(pos int32, left, right int32) (int32, error) {
	r := p.nodes[right]
	first, last, h := right, right, r.depth+1 // h: the chain's height with right in it
	if r.kind == nSubexpr {
		first, last, h = r.left, r.right, r.depth
	}
	if h > maxDepth {
		return 0, p.errorAt(pos, "expression nested too deeply")
	}
	if l := &p.nodes[left]; l.kind == nSubexpr {
		p.nodes[l.right].next = first
		l.right, l.depth = last, max(l.depth, h)
		return left, nil
	}
	p.nodes[left].next = first
	return p.add(node{kind: nSubexpr, pos: pos, left: left, right: last, depth: h})
}

func (p *parser) dotRHS(bp int) (int32, error) {
	switch p.cur() {
	case tUnquoted, tQuoted:
		if bindingPower[p.next.kind] > bp {
			return p.expression(bp)
		}
		// A lone name, the usual case, is what expression would return.
		tok := p.tok
		p.advance()
		return p.field(tok)
	case tStar:
		return p.expression(bp)
	case tLbracket:
		tok := p.tok
		p.advance()
		return p.multiList(tok)
	case tLbrace:
		tok := p.tok
		p.advance()
		return p.multiHash(tok)
	case tIndex: // .[0] is a list whose element is a bare number
		return 0, p.errorAt(p.tok.pos+1, "unexpected number")
	}
	t := p.tok
	return 0, p.errorAt(t.pos, "expected identifier, '[' or '{' after '.', found "+t.kind.String())
}
