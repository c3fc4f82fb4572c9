package jmespath

import "strconv"

// Parsing of projections, bracketed and braced forms, and function calls.

// indexOrSlice parses [n] or [start:stop:step] after the '[' at tok. A slice
// starts a projection, as in the specification.
func (p *parser) indexOrSlice(tok token, left *node) (*node, error) {
	if p.cur() == tNumber && p.next.kind != tColon {
		idx, err := p.newNode(nIndex, tok.pos)
		if err != nil {
			return nil, err
		}
		idx.index = atoi(p.lx.text(p.tok))
		p.advance()
		if err := p.match(tRbracket); err != nil {
			return nil, err
		}
		return p.binary(nIndexExpr, tok.pos, left, idx)
	}
	sl, err := p.sliceSpec(tok)
	if err != nil {
		return nil, err
	}
	ie, err := p.binary(nIndexExpr, tok.pos, left, sl)
	if err != nil {
		return nil, err
	}
	return p.projection(tok, ie, bindingPower[tStar])
}

func (p *parser) sliceSpec(tok token) (*node, error) {
	var parts [3]int
	var has [3]bool
	part := 0
	for p.cur() != tRbracket {
		switch t := p.tok; t.kind {
		case tColon:
			if part++; part == 3 {
				return nil, p.errorAt(t.pos, "a slice has at most three parts")
			}
		case tNumber:
			if has[part] {
				return nil, p.errorAt(t.pos, "expected ':' or ']' in slice")
			}
			parts[part], has[part] = atoi(p.lx.text(t)), true
		default:
			return nil, p.errorAt(t.pos, "unexpected "+t.kind.String()+" in slice")
		}
		p.advance()
	}
	p.advance() // ']'
	if has[2] && parts[2] == 0 {
		return nil, &InvalidValueError{Msg: "slice step cannot be 0"}
	}
	n, err := p.newNode(nSlice, tok.pos)
	if err != nil {
		return nil, err
	}
	spec := &sliceSpec{start: parts[0], stop: parts[1], step: 1, hasStart: has[0], hasStop: has[1]}
	if has[2] {
		spec.step = parts[2]
	}
	n.lit = spec
	return n, nil
}

// nodeList links the elements of a list through their next fields, so that
// a list costs no allocation of its own: each node has a single parent.
type nodeList struct {
	head, tail *node
	n          int
	depth      uint16 // height of the tallest element, plus one
}

func (l *nodeList) add(c *node) {
	if l.head == nil {
		l.head = c
	} else {
		l.tail.next = c
	}
	l.tail = c
	l.n++
	l.depth = max(l.depth, c.depth+1)
}

// attach makes l the elements of n: n.left is the first, n.index the count.
func (p *parser) attach(n *node, l *nodeList) error {
	if l.depth > maxDepth {
		return p.errorAt(n.pos, "expression nested too deeply")
	}
	n.left, n.index, n.depth = l.head, l.n, max(n.depth, l.depth)
	return nil
}

// multiList parses [a, b, ...] after its '['.
func (p *parser) multiList(tok token) (*node, error) {
	var items nodeList
	for {
		item, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		items.add(item)
		if p.cur() == tRbracket {
			p.advance()
			break
		}
		if err := p.match(tComma); err != nil {
			return nil, err
		}
	}
	n, err := p.newNode(nMultiList, tok.pos)
	if err != nil {
		return nil, err
	}
	return n, p.attach(n, &items)
}

// multiHash parses {k: v, ...} after its '{'.
func (p *parser) multiHash(tok token) (*node, error) {
	var keys []string
	var items nodeList
	for {
		k := p.tok
		if k.kind != tUnquoted && k.kind != tQuoted {
			return nil, p.errorAt(k.pos, "expected a key, found "+k.kind.String())
		}
		p.advance()
		if err := p.match(tColon); err != nil {
			return nil, err
		}
		v, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		keys = append(keys, p.lx.text(k))
		items.add(v)
		if p.cur() == tRbrace {
			p.advance()
			break
		}
		if err := p.match(tComma); err != nil {
			return nil, err
		}
	}
	n, err := p.newNode(nMultiHash, tok.pos)
	if err != nil {
		return nil, err
	}
	n.lit = keys
	return n, p.attach(n, &items)
}

// function parses the arguments of name( and resolves the function now, so
// that unknown names and wrong argument counts fail at compile time. The
// name's node becomes the call's.
func (p *parser) function(tok token, name *node) (*node, error) {
	if name.kind != nField {
		return nil, p.errorAt(tok.pos, "only an identifier can name a function")
	}
	var args nodeList
	if p.cur() == tRparen {
		p.advance()
	} else {
		for {
			arg, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			args.add(arg)
			if p.cur() == tRparen {
				p.advance()
				break
			}
			if err := p.match(tComma); err != nil {
				return nil, err
			}
		}
	}
	fn := p.fns.lookup(name.name)
	if fn == nil {
		return nil, &UnknownFunctionError{Expression: p.src, Offset: int(name.pos), Name: name.name}
	}
	if min, max := fn.arity(); args.n < min || max >= 0 && args.n > max {
		return nil, &ArityError{Expression: p.src, Offset: int(name.pos), Function: fn.Name, Min: min, Max: max, Got: args.n}
	}
	name.kind, name.lit = nFunction, fn
	return name, p.attach(name, &args)
}

// atoi converts a number token's text, which the lexer has checked.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func (p *parser) projectionRHS(bp int) (*node, error) {
	switch k := p.cur(); {
	case bindingPower[k] < projectionStop:
		return p.newNode(nCurrent, p.tok.pos)
	case k == tLbracket || k == tFilter:
		return p.expression(bp)
	case k == tDot:
		p.advance()
		return p.dotRHS(bp)
	}
	return nil, p.unexpected()
}

func (p *parser) projection(tok token, left *node, bp int) (*node, error) {
	right, err := p.projectionRHS(bp)
	if err != nil {
		return nil, err
	}
	return p.binary(nProjection, tok.pos, left, right)
}

func (p *parser) flatten(tok token, left *node) (*node, error) {
	flat, err := p.binary(nFlatten, tok.pos, left, nil)
	if err != nil {
		return nil, err
	}
	return p.projection(tok, flat, bindingPower[tFlatten])
}

func (p *parser) filter(tok token, left *node) (*node, error) {
	cond, err := p.expression(0)
	if err != nil {
		return nil, err
	}
	if err := p.match(tRbracket); err != nil {
		return nil, err
	}
	var right *node
	if p.cur() == tFlatten {
		right, err = p.newNode(nCurrent, tok.pos)
	} else {
		right, err = p.projectionRHS(bindingPower[tFilter])
	}
	if err != nil {
		return nil, err
	}
	n, err := p.newNode(nFilterProjection, tok.pos, left, right, cond)
	if err == nil {
		n.left, n.right, n.lit = left, right, cond
	}
	return n, err
}
