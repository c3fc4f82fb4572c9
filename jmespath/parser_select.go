package jmespath

// Parsing of projections, bracketed and braced forms, and function calls.

// indexOrSlice parses [n] (when the lexer did not read it as one tIndex)
// or [start:stop:step] after the '[' at tok, applied to left's result, or
// to the current value when left is nil. An index joins left's chain, as a
// name after a dot does, so that a run of indexes makes a flat chain. A
// slice starts a projection, as in the specification.
func (p *parser) indexOrSlice(tok token, left *node) (*node, error) {
	var sel *node
	var err error
	isIndex := p.cur() == tNumber && p.next.kind != tColon
	if isIndex {
		if sel, err = p.add(&node{kind: nIndex, pos: tok.pos, index: p.tok.num}); err == nil {
			p.advance()
			err = p.match(tRbracket)
		}
	} else {
		sel, err = p.slice(tok)
	}
	if err == nil && left != nil {
		sel, err = p.subexpr(tok.pos, left, sel)
	}
	if err != nil || isIndex {
		return sel, err
	}
	return p.projection(tok, sel, bindingPower[tStar])
}

func (p *parser) slice(tok token) (*node, error) {
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
			parts[part], has[part] = t.num, true
		default:
			return nil, p.errorAt(t.pos, "unexpected "+t.kind.String()+" in slice")
		}
		p.advance()
	}
	p.advance() // ']'
	if has[2] && parts[2] == 0 {
		return nil, &InvalidValueError{Msg: "slice step cannot be 0"}
	}
	spec := sliceSpec{start: parts[0], stop: parts[1], step: 1, hasStart: has[0], hasStop: has[1]}
	if has[2] {
		spec.step = parts[2]
	}
	return p.add(&node{kind: nSlice, pos: tok.pos, slice: spec})
}

// list parses expressions separated by commas up to the closing token
// end, which it consumes; each is parsed by item.
func (p *parser) list(end tokenKind, item func() (*node, error)) ([]*node, error) {
	var items []*node
	for {
		n, err := item()
		if err != nil {
			return nil, err
		}
		items = append(items, n)
		if p.cur() == end {
			p.advance()
			return items, nil
		}
		if err := p.match(tComma); err != nil {
			return nil, err
		}
	}
}

// multiList parses [a, b, ...] after its '['.
func (p *parser) multiList(tok token) (*node, error) {
	items, err := p.list(tRbracket, func() (*node, error) { return p.expression(0) })
	if err != nil {
		return nil, err
	}
	return p.add(&node{kind: nMultiList, pos: tok.pos, children: items})
}

// multiHash parses {k: v, ...} after its '{'.
func (p *parser) multiHash(tok token) (*node, error) {
	var keys []string
	values, err := p.list(tRbrace, func() (*node, error) {
		k := p.tok
		if k.kind != tUnquoted && k.kind != tQuoted {
			return nil, p.errorAt(k.pos, "expected a key, found "+k.kind.String())
		}
		p.advance()
		if err := p.match(tColon); err != nil {
			return nil, err
		}
		keys = append(keys, k.name)
		return p.expression(0)
	})
	if err != nil {
		return nil, err
	}
	return p.add(&node{kind: nMultiHash, pos: tok.pos, keys: keys, children: values})
}

// function parses the arguments of name( and resolves the function now, so
// that unknown names and wrong argument counts fail at compile time.
func (p *parser) function(tok token, name *node) (*node, error) {
	if name.kind != nField {
		return nil, p.errorAt(tok.pos, "only an identifier can name a function")
	}
	var args []*node
	if p.cur() == tRparen {
		p.advance()
	} else {
		var err error
		if args, err = p.list(tRparen, func() (*node, error) { return p.expression(0) }); err != nil {
			return nil, err
		}
	}
	fn := p.fns.lookup(name.name)
	if fn == nil {
		return nil, &UnknownFunctionError{Expression: p.src, Offset: name.pos, Name: name.name}
	}
	if min, max := fn.arity(); len(args) < min || max >= 0 && len(args) > max {
		return nil, &ArityError{Expression: p.src, Offset: name.pos, Function: fn.Name, Min: min, Max: max, Got: len(args)}
	}
	return p.add(&node{kind: nFunction, pos: name.pos, fn: fn, children: args})
}

func (p *parser) projectionRHS(bp int) (*node, error) {
	switch k := p.cur(); {
	case bindingPower[k] < projectionStop:
		return p.leaf(nCurrent, p.tok.pos)
	case k == tLbracket || k == tIndex || k == tFilter:
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
		right, err = p.leaf(nCurrent, tok.pos)
	} else {
		right, err = p.projectionRHS(bindingPower[tFilter])
	}
	if err != nil {
		return nil, err
	}
	return p.add(&node{kind: nFilterProjection, pos: tok.pos, left: left, right: right, cond: cond})
}
