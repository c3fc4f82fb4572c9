package sim

import (
	"bytes"
	"fmt"
	"math/big"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// This file interprets DynamoDB condition expressions: the grammar of
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.OperatorsAndFunctions.html
// as far as dynamo.Store uses it, and no further:
//
//	condition := or
//	or        := and { OR and }
//	and       := not { AND not }
//	not       := NOT not | primary
//	primary   := ( condition ) | function ( operand ) | operand comparator operand
//	function  := attribute_exists | attribute_not_exists
//	operand   := #name | :value
//	comparator := = | <> | < | <= | > | >=
//
// An expression outside it (a function the store never sends, a document
// path, BETWEEN, IN) is refused: the model must not guess a semantics it
// was not checked for against the servers, so the store starting
// to send something new fails the simulation loudly.

// cond is a parsed condition.
type cond interface {
	eval(item map[string]types.AttributeValue, names map[string]string, values map[string]types.AttributeValue) bool
}

type orCond struct{ l, r cond }
type andCond struct{ l, r cond }
type notCond struct{ c cond }
type existsCond struct {
	name string // #name
	not  bool
}
type cmpCond struct {
	op   string
	l, r string // #name or :value
}

func (c orCond) eval(i map[string]types.AttributeValue, n map[string]string, v map[string]types.AttributeValue) bool {
	return c.l.eval(i, n, v) || c.r.eval(i, n, v)
}
func (c andCond) eval(i map[string]types.AttributeValue, n map[string]string, v map[string]types.AttributeValue) bool {
	return c.l.eval(i, n, v) && c.r.eval(i, n, v)
}
func (c notCond) eval(i map[string]types.AttributeValue, n map[string]string, v map[string]types.AttributeValue) bool {
	return !c.c.eval(i, n, v)
}
func (c existsCond) eval(i map[string]types.AttributeValue, n map[string]string, _ map[string]types.AttributeValue) bool {
	_, ok := i[n[c.name]]
	return ok != c.not
}
func (c cmpCond) eval(i map[string]types.AttributeValue, n map[string]string, v map[string]types.AttributeValue) bool {
	operand := func(s string) types.AttributeValue {
		if s[0] == ':' {
			return v[s]
		}
		return i[n[s]]
	}
	a, b := operand(c.l), operand(c.r)
	cmp, ok := compareValues(a, b)
	if !ok {
		// A missing attribute, or two types: only "not equal" holds.
		return c.op == "<>"
	}
	switch c.op {
	case "=":
		return cmp == 0
	case "<>":
		return cmp != 0
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	}
	return cmp >= 0
}

// compareValues compares two scalars of one type: S by their bytes, N as
// numbers, B by their bytes. ok is false for a missing value or two
// types, or a type the model does not compare.
func compareValues(a, b types.AttributeValue) (int, bool) {
	switch a := a.(type) {
	case *types.AttributeValueMemberS:
		if b, ok := b.(*types.AttributeValueMemberS); ok {
			return strings.Compare(a.Value, b.Value), true
		}
	case *types.AttributeValueMemberN:
		if b, ok := b.(*types.AttributeValueMemberN); ok {
			x, okx := new(big.Rat).SetString(a.Value)
			y, oky := new(big.Rat).SetString(b.Value)
			if okx && oky {
				return x.Cmp(y), true
			}
		}
	case *types.AttributeValueMemberB:
		if b, ok := b.(*types.AttributeValueMemberB); ok {
			return bytes.Compare(a.Value, b.Value), true
		}
	}
	return 0, false
}

// parsed caches the conditions by their text: the store sends a handful.
var parsed sync.Map // string -> parsedCond

type parsedCond struct {
	c           cond
	names, vals []string // the placeholders it uses
	err         error
}

// parseCondition parses s, or says why it cannot.
func parseCondition(s string) parsedCond {
	if p, ok := parsed.Load(s); ok {
		return p.(parsedCond)
	}
	p := &condParser{toks: tokenize(s)}
	c, err := p.or()
	if err == nil && p.pos != len(p.toks) {
		err = fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	pc := parsedCond{c: c, names: p.names, vals: p.vals, err: err}
	if err != nil {
		pc.err = fmt.Errorf("the model does not know the condition %q: %v", s, err)
	}
	parsed.Store(s, pc)
	return pc
}

func tokenize(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ':
			i++
		case c == '(' || c == ')' || c == '=':
			toks = append(toks, s[i:i+1])
			i++
		case c == '<' || c == '>':
			j := i + 1
			if j < len(s) && (s[j] == '=' || (c == '<' && s[j] == '>')) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" ()=<>", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks
}

type condParser struct {
	toks        []string
	pos         int
	names, vals []string
}

func (p *condParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *condParser) next() string {
	t := p.peek()
	p.pos++
	return t
}

func (p *condParser) or() (cond, error) {
	l, err := p.and()
	for err == nil && strings.EqualFold(p.peek(), "OR") {
		p.next()
		var r cond
		if r, err = p.and(); err == nil {
			l = orCond{l, r}
		}
	}
	return l, err
}

func (p *condParser) and() (cond, error) {
	l, err := p.not()
	for err == nil && strings.EqualFold(p.peek(), "AND") {
		p.next()
		var r cond
		if r, err = p.not(); err == nil {
			l = andCond{l, r}
		}
	}
	return l, err
}

func (p *condParser) not() (cond, error) {
	if strings.EqualFold(p.peek(), "NOT") {
		p.next()
		c, err := p.not()
		return notCond{c}, err
	}
	return p.primary()
}

func (p *condParser) primary() (cond, error) {
	switch t := p.next(); {
	case t == "(":
		c, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.next() != ")" {
			return nil, fmt.Errorf("missing )")
		}
		return c, nil
	case t == "attribute_exists" || t == "attribute_not_exists":
		if p.next() != "(" {
			return nil, fmt.Errorf("%s without (", t)
		}
		name := p.next()
		if !strings.HasPrefix(name, "#") {
			return nil, fmt.Errorf("%s(%s): only a #name", t, name)
		}
		p.names = append(p.names, name)
		if p.next() != ")" {
			return nil, fmt.Errorf("%s: missing )", t)
		}
		return existsCond{name: name, not: t == "attribute_not_exists"}, nil
	default:
		l, err := p.operand(t)
		if err != nil {
			return nil, err
		}
		op := p.next()
		switch op {
		case "=", "<>", "<", "<=", ">", ">=":
		default:
			return nil, fmt.Errorf("comparator %q", op)
		}
		r, err := p.operand(p.next())
		if err != nil {
			return nil, err
		}
		return cmpCond{op: op, l: l, r: r}, nil
	}
}

func (p *condParser) operand(t string) (string, error) {
	switch {
	case len(t) > 1 && t[0] == '#':
		p.names = append(p.names, t)
	case len(t) > 1 && t[0] == ':':
		p.vals = append(p.vals, t)
	default:
		return "", fmt.Errorf("operand %q: only #name and :value", t)
	}
	return t, nil
}

// checkPlaceholders is DynamoDB's validation of a request's expression
// attributes: every placeholder used is defined, and every one defined is
// used ("Value provided in ExpressionAttributeValues unused in
// expressions").
func checkPlaceholders(pc parsedCond, names map[string]string, values map[string]types.AttributeValue) error {
	for _, n := range pc.names {
		if _, ok := names[n]; !ok {
			//lint:ignore ST1005 DynamoDB's own message, word for word
			return fmt.Errorf("An expression attribute name used in the document path is not defined; attribute name: %s", n)
		}
	}
	for _, v := range pc.vals {
		if _, ok := values[v]; !ok {
			//lint:ignore ST1005 DynamoDB's own message, word for word
			return fmt.Errorf("An expression attribute value used in expression is not defined; attribute value: %s", v)
		}
	}
	for n := range names {
		if !contains(pc.names, n) {
			return fmt.Errorf("Value provided in ExpressionAttributeNames unused in expressions: keys: {%s}", n)
		}
	}
	for v := range values {
		if !contains(pc.vals, v) {
			return fmt.Errorf("Value provided in ExpressionAttributeValues unused in expressions: keys: {%s}", v)
		}
	}
	return nil
}
