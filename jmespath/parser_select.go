package jmespath

import "strconv"

// Parsing of bracketed and braced forms and of function calls.

// indexOrSlice parses [n] or [start:stop:step] after the '[' at tok. A slice
// starts a projection, as in the specification.
func (p *parser) indexOrSlice(tok token, left *node) (*node, error) {
	if p.cur() == tNumber && p.next.kind != tColon {
		idx, err := p.newNode(nIndex, tok.pos)
		if err != nil {
			return nil, err
		}
		idx.index = atoi(p.tok.text)
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
			parts[part], has[part] = atoi(t.text), true
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
	n.slice = &sliceSpec{start: parts[0], stop: parts[1], step: 1, hasStart: has[0], hasStop: has[1]}
	if has[2] {
		n.slice.step = parts[2]
	}
	return n, nil
}

// multiList parses [a, b, ...] after its '['.
func (p *parser) multiList(tok token) (*node, error) {
	var items []*node
	for {
		item, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
		if p.cur() == tRbracket {
			p.advance()
			break
		}
		if err := p.match(tComma); err != nil {
			return nil, err
		}
	}
	n, err := p.newNode(nMultiList, tok.pos, items...)
	if err == nil {
		n.list = items
	}
	return n, err
}

// multiHash parses {k: v, ...} after its '{'.
func (p *parser) multiHash(tok token) (*node, error) {
	var keys []string
	var items []*node
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
		keys = append(keys, k.text)
		items = append(items, v)
		if p.cur() == tRbrace {
			p.advance()
			break
		}
		if err := p.match(tComma); err != nil {
			return nil, err
		}
	}
	n, err := p.newNode(nMultiHash, tok.pos, items...)
	if err == nil {
		n.keys, n.list = keys, items
	}
	return n, err
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
		for {
			arg, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			args = append(args, arg)
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
	if min, max := fn.arity(); len(args) < min || max >= 0 && len(args) > max {
		return nil, &ArityError{Expression: p.src, Offset: int(name.pos), Function: fn.Name, Min: min, Max: max, Got: len(args)}
	}
	n, err := p.newNode(nFunction, name.pos, args...)
	if err == nil {
		n.name, n.list, n.fn = name.name, args, fn
	}
	return n, err
}

// atoi converts a number token's text, which the lexer has checked.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
