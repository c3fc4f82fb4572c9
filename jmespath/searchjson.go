package jmespath

import (
	"cmp"
	"errors"

	"github.com/gopowertools/lambda/internal/strictjson"
)

// SearchJSON evaluates the expression against the JSON document raw, with
// numbers as json.Number, as a handler that decodes raw into a struct with
// encoding/json reads it, or refuses it. Where SearchJSON answers, Search
// on raw decoded by encoding/json with UseNumber gives the same answer;
// where Search refuses, SearchJSON refuses too.
//
// It refuses, with an [*InvalidValueError] wrapping the reason:
//
//   - raw, if it is not JSON (*strictjson.SyntaxError);
//   - raw, if an object anywhere in it, or in a document that a
//     powertools_json call decodes, has two member names equal under the
//     folding by which encoding/json matches struct fields ("order_id",
//     "ORDER_ID"; "sku" and "\u017fku", with a long s), exact repeats
//     included (*strictjson.DuplicateNameError);
//   - raw, if a string anywhere in it or in such a document holds a byte
//     that is not UTF-8 or a \u escape of a lone surrogate, which
//     encoding/json decodes as U+FFFD (*strictjson.InvalidTextError);
//   - a field looked up in an object that holds a name equal to the
//     field's under that folding but not identical, whether the field's
//     own name is there or not, whoever made the object: raw, merge, a
//     multi-select hash (*strictjson.DuplicateNameError, Offset -1 but
//     for a chain followed in raw);
//   - what a Powertools function refuses, and a search past its
//     decoding budget (see the package documentation).
//
// Text that is not JSON is reported as such; otherwise the first refusal
// met is returned. Search sees none of the ambiguities
// in raw itself, which encoding/json's decoding hides (the last of
// repeated names kept, U+FFFD for bad text), nor a name folding to a
// field's without being it, which Search reads as another name. On such
// documents SearchJSON refuses where Search may answer; it never answers
// otherwise than Search.
//
// An expression that starts with a chain of field names, non-negative
// indexes, list projections ([*]) and Powertools calls, such as
// `requestContext.requestId`, `powertools_json(body).order_id` or
// `Records[*].powertools_json(powertools_base64(kinesis.data)).id`, or
// that is a multi-select of such chains, such as `[customer_id,
// order_id]`, is read in one pass over raw that validates all of it and
// decodes only what the chains select; the rest of the expression, if
// any, is evaluated on that. Any other expression decodes raw whole
// first.
func (e *Expression) SearchJSON(raw []byte) (any, error) {
	results, err := SearchJSONAll(raw, e)
	if xe, ok := err.(*ExpressionError); ok {
		return nil, xe.Err
	}
	if err != nil {
		return nil, err
	}
	return results[0], nil
}

// SearchJSONAll is [Expression.SearchJSON] for several expressions on one
// document, read once, with the same refusals: results[i] is what
// exprs[i] selects. All that the expressions decode draws on one budget,
// the least of their decode limits (see the package documentation). When
// every expression starts with a chain of fields, indexes, projections
// and Powertools functions, the document is read in one pass that
// follows all of them; otherwise it is decoded whole, once. The error, if
// any, is an [*ExpressionError] naming the expression it concerns: the
// first, for a document that every one refuses.
func SearchJSONAll(raw []byte, exprs ...*Expression) (results []any, err error) {
	defer guard(&err)
	results = make([]any, len(exprs))
	if len(exprs) == 0 {
		return results, nil
	}
	budget := &strictjson.Budget{Limit: exprs[0].strict.decodeLimit}
	var paths [][]strictjson.Step
	for _, e := range exprs {
		budget.Limit = min(budget.Limit, e.strict.decodeLimit)
		if e.plan == nil {
			paths = nil
			break
		}
		paths = append(paths, e.plan.paths...)
	}
	if paths == nil {
		doc, err := strictjson.Decode(raw, budget)
		if err != nil {
			return nil, &ExpressionError{Expression: exprs[0], Err: jsonError(err)}
		}
		for i, e := range exprs {
			t := e.strict.within(budget)
			if results[i], err = t.eval(t.root, doc); err != nil {
				return nil, &ExpressionError{Expression: e, Err: err}
			}
		}
		return results, nil
	}
	values, err := strictjson.FindAll(raw, budget, paths...)
	if err != nil {
		x := exprs[0]
		if pe, ok := err.(*strictjson.PathError); ok {
			x, err = owner(exprs, pe.Path), pe.Err
		}
		return nil, &ExpressionError{Expression: x, Err: jsonError(err)}
	}
	for i, e := range exprs {
		n := len(e.plan.paths)
		if results[i], err = e.plan.result(&e.strict, budget, values[:n]); err != nil {
			return nil, &ExpressionError{Expression: e, Err: err}
		}
		values = values[n:]
	}
	return results, nil
}

// owner returns the expression of exprs whose plan has path i of their
// paths, put end to end.
func owner(exprs []*Expression, i int) *Expression {
	for _, e := range exprs {
		if i < len(e.plan.paths) {
			return e
		}
		i -= len(e.plan.paths)
	}
	return exprs[0]
}

// ExpressionError is the error of [SearchJSONAll]: what the search of
// Expression met.
type ExpressionError struct {
	Expression *Expression
	Err        error
}

func (e *ExpressionError) Error() string { return e.Err.Error() }

func (e *ExpressionError) Unwrap() error { return e.Err }

// A plan is how SearchJSON reads a document for an expression that starts
// with a chain of fields, non-negative indexes, list projections ([*])
// and Powertools functions: the paths that strictjson.FindAll follows,
// and how their results make the expression's value.
type plan struct {
	paths [][]strictjson.Step
	// rest, with one path, holds the elements of the root chain
	// evaluated after it, on what it selects.
	rest []*node
	// keys is set when the chain is followed by a multi-select of paths,
	// such as `powertools_json(body).[amount, currency]` or
	// `{c: customer_id, o: order_id}`: then paths[0] is the chain,
	// ending in a Type step, and each other path is the chain and an
	// element of the multi-select. The value is read as it would be by
	// following the chain, then the elements, without decoding what the
	// chain selects. keys holds the names of a hash's elements, and is
	// empty, not nil, for a list.
	keys []string
}

// result makes the expression's value from the values of p.paths, t
// evaluating the rest of it, if any, within budget.
func (p *plan) result(t *tree, budget *strictjson.Budget, values []any) (any, error) {
	switch {
	case p.keys != nil:
		// A multi-select of null is null; of anything else, the list
		// or the hash.
		if typ, _ := values[0].(string); typ == "" || typ == "null" {
			return nil, nil
		}
		if len(p.keys) == 0 {
			if err := budget.Spend(strictjson.ListCost(len(values) - 1)); err != nil {
				return nil, tooLarge("", err)
			}
			return append([]any(nil), values[1:]...), nil
		}
		if err := budget.Spend(strictjson.ObjectCost(len(p.keys))); err != nil {
			return nil, tooLarge("", err)
		}
		m := make(map[string]any, len(p.keys))
		for i, k := range p.keys {
			m[k] = values[1+i]
		}
		return m, nil
	case p.rest != nil:
		return t.within(budget).chain(p.rest, values[0])
	}
	return values[0], nil
}

// planPath returns the plan of an expression that starts with a chain of
// fields, indexes, projections and Powertools functions, or is a
// multi-select of such chains, or nil.
func planPath(root *node) *plan {
	switch root.kind {
	case nMultiList, nMultiHash:
		return planSelect(nil, root)
	case nSubexpr:
	default:
		if steps, ok := appendPath(nil, root); ok && len(steps) > 0 {
			return &plan{paths: [][]strictjson.Step{steps}}
		}
		return nil
	}
	var steps []strictjson.Step
	var rest []*node
	for i, c := range root.children {
		more, ok := appendPath(steps, c)
		if !ok {
			rest = root.children[i:]
			break
		}
		steps = more
	}
	switch {
	case len(steps) == 0:
		return nil
	case len(rest) == 1:
		if p := planSelect(steps, rest[0]); p != nil {
			return p
		}
	}
	return &plan{paths: [][]strictjson.Step{steps}, rest: rest}
}

// planSelect returns the plan of chain followed by sel, when sel is a
// multi-select list or hash of paths and the last element of the root
// chain (or the root itself, chain empty), or nil. An element's path
// follows the chain, then its own steps, the first of them marked Select:
// where the chain selects null, the multi-select is null, and nothing in
// it is evaluated.
func planSelect(chain []strictjson.Step, sel *node) *plan {
	if sel.kind != nMultiList && sel.kind != nMultiHash || closed(chain) {
		return nil
	}
	chain = chain[:len(chain):len(chain)]
	p := &plan{paths: [][]strictjson.Step{append(chain, strictjson.Step{Kind: strictjson.Type})}, keys: sel.keys}
	if p.keys == nil {
		p.keys = []string{}
	}
	for _, c := range sel.children {
		elem, ok := appendPath(chain, c)
		if !ok || len(elem) == len(chain) {
			return nil
		}
		elem[len(chain)].Select = true
		p.paths = append(p.paths, elem)
	}
	return p
}

// jsonError maps an error of the strict scanner to this package's errors:
// a step on a non-string that needs one is the type error Search gives for
// its function, a reading past the budget is the error of the function
// that decodes (or, outside any, of the search), and anything else in a
// document held in a string is that function's invalid value.
func jsonError(err error) error {
	var typeErr *strictjson.TypeError
	if errors.As(err, &typeErr) {
		return &InvalidTypeError{Function: cmp.Or(typeErr.Name, "powertools_json"), Want: TypeString, Got: typeErr.Got}
	}
	var limitErr *strictjson.LimitError
	if errors.As(err, &limitErr) {
		fn := ""
		if limitErr.Quoted {
			fn = "powertools_json"
		}
		return tooLarge(fn, limitErr)
	}
	var syntaxErr *strictjson.SyntaxError
	if errors.As(err, &syntaxErr) {
		if syntaxErr.Quoted {
			return &InvalidValueError{Function: "powertools_json", Msg: "invalid JSON", Err: err}
		}
		return &InvalidValueError{Msg: "invalid JSON document", Err: err}
	}
	if quotedAmbiguity(err) {
		return &InvalidValueError{Function: "powertools_json", Msg: "ambiguous JSON", Err: err}
	}
	var dupErr *strictjson.DuplicateNameError
	var textErr *strictjson.InvalidTextError
	if errors.As(err, &dupErr) || errors.As(err, &textErr) {
		return &InvalidValueError{Msg: "ambiguous JSON document", Err: err}
	}
	return err // a Powertools function's own, at a Transform step
}

// quotedAmbiguity reports whether err, an error of the strict scanner, is
// a refusal of text that encoding/json could read two ways in a document
// held in a string.
func quotedAmbiguity(err error) bool {
	var dupErr *strictjson.DuplicateNameError
	var textErr *strictjson.InvalidTextError
	return errors.As(err, &dupErr) && dupErr.Quoted || errors.As(err, &textErr) && textErr.Quoted
}

// appendPath appends to steps the path of n, if it is a chain of fields,
// indexes, list projections and Powertools functions: a powertools_json
// call is a Document step, the other two Transform steps, and [*] an
// Each step that the rest of the projection follows. Nothing can follow
// a projection's path but its own right side: a step after it would
// apply to each element, where the expression applies it to the list.
func appendPath(steps []strictjson.Step, n *node) ([]strictjson.Step, bool) {
	if closed(steps) {
		return nil, false
	}
	ok := true
	switch n.kind {
	case nCurrent:
	case nField:
		steps = append(steps, strictjson.Step{Kind: strictjson.Member, Name: n.name})
	case nSubexpr:
		for _, c := range n.children {
			if steps, ok = appendPath(steps, c); !ok {
				break
			}
		}
	case nIndex:
		if n.index < 0 {
			return nil, false
		}
		steps = append(steps, strictjson.Step{Kind: strictjson.Index, Index: n.index})
	case nProjection:
		// A projection on a projection's list, (a[*].b)[*].c, projects
		// the list: an Each step after the other would go into each b.
		if steps, ok = appendPath(steps, n.left); !ok || closed(steps) {
			return nil, false
		}
		right, rok := appendPath(nil, n.right)
		steps, ok = append(append(steps, strictjson.Step{Kind: strictjson.Each}), right...), rok
	case nFunction:
		step, decodes := decodeStep(n.fn)
		if !decodes || len(n.children) != 1 {
			return nil, false
		}
		if steps, ok = appendPath(steps, n.children[0]); ok && !closed(steps) {
			steps = append(steps, step)
		} else {
			ok = false
		}
	default:
		ok = false
	}
	return steps, ok
}

// closed reports whether steps hold a projection, after which no step
// can be added.
func closed(steps []strictjson.Step) bool {
	for _, st := range steps {
		if st.Kind == strictjson.Each {
			return true
		}
	}
	return false
}
