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
	src   string
	lx    lexer
	tok   token // the current token
	next  token // the one after it
	depth int
	fns   functionTable
}

// parse parses src into a tree.
func parse(src string, fns functionTable) (tree, error) {
	p := parser{src: src, lx: lexer{src: src}, fns: fns}
	p.next = p.lx.scan()
	p.advance()
	root, err := p.expression(0)
	if err == nil && p.cur() != tEOF {
		err = p.unexpected()
	}
	if err != nil {
		return tree{}, err
	}
	return tree{root: root}, nil
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
func (p *parser) errorAt(pos int, msg string) error {
	if p.tok.kind == tError {
		return p.lx.err
	}
	return &SyntaxError{Expression: p.src, Offset: pos, Msg: msg}
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

// add returns n, whose children are set, with its height: one more than
// its tallest child's, and at most maxDepth.
func (p *parser) add(n *node) (*node, error) {
	for _, c := range [...]*node{n.left, n.right, n.cond} {
		if c != nil {
			n.depth = max(n.depth, c.depth+1)
		}
	}
	for _, c := range n.children {
		n.depth = max(n.depth, c.depth+1)
	}
	if n.depth > maxDepth {
		return nil, p.errorAt(n.pos, "expression nested too deeply")
	}
	return n, nil
}

func (p *parser) leaf(kind nodeKind, pos int) (*node, error) {
	return p.add(&node{kind: kind, pos: pos})
}

func (p *parser) binary(kind nodeKind, pos int, left, right *node) (*node, error) {
	return p.add(&node{kind: kind, pos: pos, left: left, right: right})
}

func (p *parser) expression(bp int) (*node, error) {
	if p.depth++; p.depth > maxDepth {
		return nil, p.errorAt(p.tok.pos, "expression nested too deeply")
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

func (p *parser) nud(tok token) (*node, error) {
	switch tok.kind {
	case tLiteral:
		return p.add(&node{kind: nLiteral, pos: tok.pos, value: tok.value})
	case tUnquoted:
		return p.field(tok)
	case tQuoted:
		if p.cur() == tLparen {
			return nil, p.errorAt(tok.pos, "a quoted identifier cannot name a function")
		}
		return p.field(tok)
	case tStar:
		left, err := p.leaf(nCurrent, tok.pos)
		if err != nil {
			return nil, err
		}
		var right *node
		if p.cur() == tRbracket {
			right, err = p.leaf(nCurrent, tok.pos)
		} else {
			right, err = p.projectionRHS(bindingPower[tStar])
		}
		if err != nil {
			return nil, err
		}
		return p.binary(nValueProjection, tok.pos, left, right)
	case tFilter:
		cur, err := p.leaf(nCurrent, tok.pos)
		if err != nil {
			return nil, err
		}
		return p.filter(tok, cur)
	case tLbrace:
		return p.multiHash(tok)
	case tLparen:
		n, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		return n, p.match(tRparen)
	case tFlatten:
		cur, err := p.leaf(nCurrent, tok.pos)
		if err != nil {
			return nil, err
		}
		return p.flatten(tok, cur)
	case tNot:
		operand, err := p.expression(bindingPower[tNot])
		if err != nil {
			return nil, err
		}
		return p.binary(nNot, tok.pos, operand, nil)
	case tLbracket:
		switch {
		case p.cur() == tNumber || p.cur() == tColon:
			return p.indexOrSlice(tok, nil)
		case p.cur() == tStar && p.next.kind == tRbracket:
			p.advance()
			p.advance()
			cur, err := p.leaf(nCurrent, tok.pos)
			if err != nil {
				return nil, err
			}
			return p.projection(tok, cur, bindingPower[tStar])
		}
		return p.multiList(tok)
	case tIndex:
		return p.add(&node{kind: nIndex, pos: tok.pos, index: tok.num})
	case tCurrent:
		return p.leaf(nCurrent, tok.pos)
	case tExpref:
		operand, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		return p.binary(nExpref, tok.pos, operand, nil)
	case tEOF:
		return nil, p.errorAt(tok.pos, "incomplete expression")
	}
	return nil, p.errorAt(tok.pos, "unexpected "+tok.kind.String())
}

func (p *parser) field(tok token) (*node, error) {
	return p.add(&node{kind: nField, pos: tok.pos, name: tok.name})
}

func (p *parser) led(tok token, left *node) (*node, error) {
	switch tok.kind {
	case tDot:
		if p.cur() == tStar {
			p.advance()
			right, err := p.projectionRHS(bindingPower[tDot])
			if err != nil {
				return nil, err
			}
			return p.binary(nValueProjection, tok.pos, left, right)
		}
		right, err := p.dotRHS(bindingPower[tDot])
		if err != nil {
			return nil, err
		}
		return p.subexpr(tok.pos, left, right)
	case tPipe, tOr, tAnd:
		right, err := p.expression(bindingPower[tok.kind])
		if err != nil {
			return nil, err
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
			return nil, err
		}
		return p.add(&node{kind: nCompare, op: tok.kind, pos: tok.pos, left: left, right: right})
	case tLparen:
		return p.function(tok, left)
	case tIndex:
		idx, err := p.add(&node{kind: nIndex, pos: tok.pos, index: tok.num})
		if err != nil {
			return nil, err
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
			return nil, err
		}
		if err := p.match(tRbracket); err != nil {
			return nil, err
		}
		return p.projection(tok, left, bindingPower[tStar])
	}
	return nil, p.errorAt(tok.pos, "unexpected "+tok.kind.String())
}

// subexpr joins left and right into one chain, evaluated in order, so
// that a.b.c and a[0][1] make flat chains rather than deep trees.
func (p *parser) subexpr(pos int, left, right *node) (*node, error) {
	chain := left
	if left.kind != nSubexpr {
		chain = &node{kind: nSubexpr, pos: pos, depth: left.depth + 1, children: []*node{left}}
	}
	if right.kind == nSubexpr {
		chain.children = append(chain.children, right.children...)
		chain.depth = max(chain.depth, right.depth)
	} else {
		chain.children = append(chain.children, right)
		chain.depth = max(chain.depth, right.depth+1)
	}
	if chain.depth > maxDepth {
		return nil, p.errorAt(pos, "expression nested too deeply")
	}
	return chain, nil
}

func (p *parser) dotRHS(bp int) (*node, error) {
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
		return nil, p.errorAt(p.tok.pos+1, "unexpected number")
	}
	t := p.tok
	return nil, p.errorAt(t.pos, "expected identifier, '[' or '{' after '.', found "+t.kind.String())
}
