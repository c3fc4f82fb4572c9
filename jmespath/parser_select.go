package jmespath

// Parsing of projections, bracketed and braced forms, and function calls.

// indexOrSlice parses [n] (when the lexer did not read it as one tIndex)
// or [start:stop:step] after the '[' at tok, applied to left's result, or
// to the current value when left is 0. An index joins left's chain, as a
// name after a dot does, so that a run of indexes makes a flat chain. A
// slice starts a projection, as in the specification.
func (p *parser) indexOrSlice(tok token, left int32) (int32, error) {
	var sel int32
	var err error
	isIndex := p.cur() == tNumber && p.next.kind != tColon
	if isIndex {
		if sel, err = p.add(node{kind: nIndex, pos: tok.pos, a: p.tok.val}); err == nil {
			p.advance()
			err = p.match(tRbracket)
		}
	} else {
		sel, err = p.sliceSpec(tok)
	}
	if err == nil && left != 0 {
		sel, err = p.subexpr(tok.pos, left, sel)
	}
	if err != nil || isIndex {
		return sel, err
	}
	return p.projection(tok, sel, bindingPower[tStar])
}

func (p *parser) sliceSpec(tok token) (int32, error) {
	var parts [3]int
	var has [3]bool
	part := 0
	for p.cur() != tRbracket {
		switch t := p.tok; t.kind {
		case tColon:
			if part++; part == 3 {
				return 0, p.errorAt(t.pos, "a slice has at most three parts")
			}
		case tNumber:
			if has[part] {
				return 0, p.errorAt(t.pos, "expected ':' or ']' in slice")
			}
			parts[part], has[part] = int(t.val), true
		default:
			return 0, p.errorAt(t.pos, "unexpected "+t.kind.String()+" in slice")
		}
		p.advance()
	}
	p.advance() // ']'
	if has[2] && parts[2] == 0 {
		return 0, &InvalidValueError{Msg: "slice step cannot be 0"}
	}
	spec := &sliceSpec{start: parts[0], stop: parts[1], step: 1, hasStart: has[0], hasStop: has[1]}
	if has[2] {
		spec.step = parts[2]
	}
	return p.add(node{kind: nSlice, pos: tok.pos, a: p.lx.keep(spec)})
}

// nodeList links the elements of a list through their next fields, so that
// a list costs no allocation of its own: each node has a single parent.
type nodeList struct {
	head, tail int32
	n          int
	depth      uint16 // height of the tallest element, plus one
}

func (p *parser) addTo(l *nodeList, c int32) {
	if l.head == 0 {
		l.head = c
	} else {
		p.nodes[l.tail].next = c
	}
	l.tail = c
	l.n++
	l.depth = max(l.depth, p.height(c))
}

// list adds n with the elements of l as its children: n.left is the
// first, n.b the count. It takes the place of node at when at is not 0.
func (p *parser) list(at int32, n node, l *nodeList) (int32, error) {
	if l.depth > maxDepth {
		return 0, p.errorAt(n.pos, "expression nested too deeply")
	}
	n.left, n.b, n.depth = l.head, int32(l.n), l.depth
	p.simple = false // lists and calls are not among simpleKind
	if at == 0 {
		p.nodes = append(p.nodes, n)
		return int32(len(p.nodes) - 1), nil
	}
	p.nodes[at] = n
	return at, nil
}

// multiList parses [a, b, ...] after its '['.
func (p *parser) multiList(tok token) (int32, error) {
	var items nodeList
	for {
		item, err := p.expression(0)
		if err != nil {
			return 0, err
		}
		p.addTo(&items, item)
		if p.cur() == tRbracket {
			p.advance()
			break
		}
		if err := p.match(tComma); err != nil {
			return 0, err
		}
	}
	return p.list(0, node{kind: nMultiList, pos: tok.pos}, &items)
}

// multiHash parses {k: v, ...} after its '{'.
func (p *parser) multiHash(tok token) (int32, error) {
	var keys []string
	var items nodeList
	for {
		k := p.tok
		if k.kind != tUnquoted && k.kind != tQuoted {
			return 0, p.errorAt(k.pos, "expected a key, found "+k.kind.String())
		}
		p.advance()
		if err := p.match(tColon); err != nil {
			return 0, err
		}
		v, err := p.expression(0)
		if err != nil {
			return 0, err
		}
		keys = append(keys, p.lx.text(k))
		p.addTo(&items, v)
		if p.cur() == tRbrace {
			p.advance()
			break
		}
		if err := p.match(tComma); err != nil {
			return 0, err
		}
	}
	return p.list(0, node{kind: nMultiHash, pos: tok.pos, a: p.lx.keep(keys)}, &items)
}

// function parses the arguments of name( and resolves the function now, so
// that unknown names and wrong argument counts fail at compile time. The
// call takes the place of the name's node.
func (p *parser) function(tok token, name int32) (int32, error) {
	nn := p.nodes[name]
	if nn.kind != nField {
		return 0, p.errorAt(tok.pos, "only an identifier can name a function")
	}
	var args nodeList
	if p.cur() == tRparen {
		p.advance()
	} else {
		for {
			arg, err := p.expression(0)
			if err != nil {
				return 0, err
			}
			p.addTo(&args, arg)
			if p.cur() == tRparen {
				p.advance()
				break
			}
			if err := p.match(tComma); err != nil {
				return 0, err
			}
		}
	}
	fname := p.nameOf(&nn)
	fn := p.fns.lookup(fname)
	if fn == nil {
		return 0, &UnknownFunctionError{Expression: p.src, Offset: int(nn.pos), Name: fname}
	}
	if min, max := fn.arity(); args.n < min || max >= 0 && args.n > max {
		return 0, &ArityError{Expression: p.src, Offset: int(nn.pos), Function: fn.Name, Min: min, Max: max, Got: args.n}
	}
	return p.list(name, node{kind: nFunction, pos: nn.pos, a: p.lx.keep(fn)}, &args)
}

func (p *parser) projectionRHS(bp int) (int32, error) {
	switch k := p.cur(); {
	case bindingPower[k] < projectionStop:
		return p.leaf(nCurrent, p.tok.pos)
	case k == tLbracket || k == tIndex || k == tFilter:
		return p.expression(bp)
	case k == tDot:
		p.advance()
		return p.dotRHS(bp)
	}
	return 0, p.unexpected()
}

func (p *parser) projection(tok token, left int32, bp int) (int32, error) {
	right, err := p.projectionRHS(bp)
	if err != nil {
		return 0, err
	}
	return p.binary(nProjection, tok.pos, left, right)
}

func (p *parser) flatten(tok token, left int32) (int32, error) {
	flat, err := p.binary(nFlatten, tok.pos, left, 0)
	if err != nil {
		return 0, err
	}
	return p.projection(tok, flat, bindingPower[tFlatten])
}

func (p *parser) filter(tok token, left int32) (int32, error) {
	cond, err := p.expression(0)
	if err != nil {
		return 0, err
	}
	if err := p.match(tRbracket); err != nil {
		return 0, err
	}
	var right int32
	if p.cur() == tFlatten {
		right, err = p.leaf(nCurrent, tok.pos)
	} else {
		right, err = p.projectionRHS(bindingPower[tFilter])
	}
	if err != nil {
		return 0, err
	}
	return p.add(node{kind: nFilterProjection, pos: tok.pos, left: left, right: right, a: cond})
}
