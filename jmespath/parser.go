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
	tLbrace: 50, tLbracket: 55, tLparen: 60,
	tEOF: 0,
}

// parser reads tokens from its lexer as it goes, with one token of
// lookahead, so that no token list is built.
type parser struct {
	src    string
	lx     lexer
	tok    token // the current token
	next   token // the one after it
	lexErr error // why the lexer stopped, once a token is tError
	depth  int
	arena  []node
	fns    functionTable
}

func newParser(src string, fns functionTable) parser {
	p := parser{src: src, lx: lexer{src: src}, fns: fns}
	p.next = p.scan()
	p.advance()
	return p
}

// scan reads a token, turning a lexer error into a tError token that
// reports it when the parser gets there.
func (p *parser) scan() token {
	t, err := p.lx.scan()
	if err != nil {
		p.lexErr = err
		return token{kind: tError, pos: int32(p.lx.pos), val: -1}
	}
	return t
}

func (p *parser) advance() {
	p.tok = p.next
	if p.next.kind != tEOF && p.next.kind != tError {
		p.next = p.scan()
	}
}

func (p *parser) cur() tokenKind { return p.tok.kind }

// errorAt reports a syntax error; when the parser stands on a token the
// lexer could not read, the lexer's error is the one to report.
func (p *parser) errorAt(pos int32, msg string) error {
	if p.tok.kind == tError {
		return p.lexErr
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

// newNode takes a node from the arena; nodes are allocated in chunks so
// that compiling costs few allocations.
func (p *parser) newNode(kind nodeKind, pos int32, children ...*node) (*node, error) {
	if len(p.arena) == cap(p.arena) {
		p.arena = make([]node, 0, max(2*cap(p.arena), estimateNodes(p.src)))
	}
	// The chunk is zeroed; setting fields one by one, rather than
	// appending a whole node, spares the write barriers of its pointers.
	p.arena = p.arena[:len(p.arena)+1]
	n := &p.arena[len(p.arena)-1]
	n.kind, n.pos = kind, pos
	for _, c := range children {
		if c != nil && c.depth >= n.depth {
			n.depth = c.depth + 1
		}
	}
	if n.depth > maxDepth {
		return nil, p.errorAt(pos, "expression nested too deeply")
	}
	return n, nil
}

func (p *parser) binary(kind nodeKind, pos int32, left, right *node) (*node, error) {
	n, err := p.newNode(kind, pos, left, right)
	if err != nil {
		return nil, err
	}
	n.left, n.right = left, right
	return n, nil
}

func (p *parser) parse() (*node, error) {
	n, err := p.expression(0)
	if err != nil {
		return nil, err
	}
	if p.cur() != tEOF {
		return nil, p.unexpected()
	}
	return n, nil
}

func (p *parser) expression(bp int) (*node, error) {
	if p.depth++; p.depth > maxDepth {
		return nil, p.errorAt(p.tok.pos, "expression nested too deeply")
	}
	defer func() { p.depth-- }()
	tok := p.tok
	p.advance()
	left, err := p.nud(tok)
	if err != nil {
		return nil, err
	}
	for bp < bindingPower[p.cur()] {
		tok = p.tok
		p.advance()
		if left, err = p.led(tok, left); err != nil {
			return nil, err
		}
	}
	return left, nil
}

func (p *parser) nud(tok token) (*node, error) {
	switch tok.kind {
	case tLiteral:
		n, err := p.newNode(nLiteral, tok.pos)
		if err == nil {
			n.lit = p.lx.vals[tok.val]
		}
		return n, err
	case tUnquoted:
		return p.field(tok)
	case tQuoted:
		if p.cur() == tLparen {
			return nil, p.errorAt(tok.pos, "a quoted identifier cannot name a function")
		}
		return p.field(tok)
	case tStar:
		left, err := p.newNode(nCurrent, tok.pos)
		if err != nil {
			return nil, err
		}
		var right *node
		if p.cur() == tRbracket {
			right, err = p.newNode(nCurrent, tok.pos)
		} else {
			right, err = p.projectionRHS(bindingPower[tStar])
		}
		if err != nil {
			return nil, err
		}
		return p.binary(nValueProjection, tok.pos, left, right)
	case tFilter:
		cur, err := p.newNode(nCurrent, tok.pos)
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
		cur, err := p.newNode(nCurrent, tok.pos)
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
		cur, err := p.newNode(nCurrent, tok.pos)
		if err != nil {
			return nil, err
		}
		switch {
		case p.cur() == tNumber || p.cur() == tColon:
			return p.indexOrSlice(tok, cur)
		case p.cur() == tStar && p.next.kind == tRbracket:
			p.advance()
			p.advance()
			return p.projection(tok, cur, bindingPower[tStar])
		}
		return p.multiList(tok)
	case tCurrent:
		return p.newNode(nCurrent, tok.pos)
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
	n, err := p.newNode(nField, tok.pos)
	if err == nil {
		n.name = p.lx.text(tok)
	}
	return n, err
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
		n, err := p.binary(nCompare, tok.pos, left, right)
		if err == nil {
			n.op = tok.kind
		}
		return n, err
	case tLparen:
		return p.function(tok, left)
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

// subexpr appends right to left's chain, keeping a.b.c flat so that long
// paths do not make deep trees.
func (p *parser) subexpr(pos int32, left, right *node) (*node, error) {
	if left.kind == nSubexpr {
		if right.depth >= maxDepth {
			return nil, p.errorAt(pos, "expression nested too deeply")
		}
		if right.depth >= left.depth {
			left.depth = right.depth + 1
		}
		left.right.next = right
		left.right = right
		return left, nil
	}
	n, err := p.newNode(nSubexpr, pos, left, right)
	if err == nil {
		left.next = right
		n.left, n.right = left, right
	}
	return n, err
}

func (p *parser) dotRHS(bp int) (*node, error) {
	switch p.cur() {
	case tUnquoted, tQuoted, tStar:
		return p.expression(bp)
	case tLbracket:
		tok := p.tok
		p.advance()
		return p.multiList(tok)
	case tLbrace:
		tok := p.tok
		p.advance()
		return p.multiHash(tok)
	}
	t := p.tok
	return nil, p.errorAt(t.pos, "expected identifier, '[' or '{' after '.', found "+t.kind.String())
}
