package jmespath

import (
	"errors"
	"slices"

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
//   - what a Powertools function refuses, such as an output past the
//     decode limit (see the package documentation).
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
// indexes and powertools_json calls, such as `requestContext.requestId`
// or `powertools_json(body).order_id`, is read in one pass over raw that
// validates all of it and decodes only what the chain selects; the rest
// of the expression, if any, is evaluated on that. Any other expression
// decodes raw whole first.
func (e *Expression) SearchJSON(raw []byte) (any, error) {
	results, err := SearchJSONAll(raw, e)
	if err != nil {
		return nil, err
	}
	return results[0], nil
}

// SearchJSONAll is [Expression.SearchJSON] for several expressions on one
// document, read once, with the same refusals, each expression within its
// own decode limit: results[i] is what exprs[i] selects. When every
// expression starts with a chain of fields, indexes and powertools_json
// calls, the document is read in one pass that follows all of them;
// otherwise it is decoded whole, once. The error, if any, is the first
// met, whichever expression it concerns; SearchJSON on each expression
// tells them apart.
func SearchJSONAll(raw []byte, exprs ...*Expression) (results []any, err error) {
	defer guard(&err)
	results = make([]any, len(exprs))
	var paths [][]strictjson.Step
	for _, e := range exprs {
		if e.plan == nil {
			paths = nil
			break
		}
		paths = append(paths, e.plan.paths...)
	}
	if paths == nil {
		doc, err := strictjson.Decode(raw)
		if err != nil {
			return nil, jsonError(err)
		}
		for i, e := range exprs {
			if results[i], err = e.strict.eval(e.strict.root, doc); err != nil {
				return nil, err
			}
		}
		return results, nil
	}
	values, err := strictjson.FindAll(raw, paths...)
	if err != nil {
		return nil, jsonError(err)
	}
	for i, e := range exprs {
		n := len(e.plan.paths)
		if results[i], err = e.plan.result(e, values[:n]); err != nil {
			return nil, err
		}
		values = values[n:]
	}
	return results, nil
}

// A plan is how SearchJSON reads a document for an expression that starts
// with a chain of fields, non-negative indexes and powertools_json calls:
// the paths that strictjson.FindAll follows, and how their results make
// the expression's value.
type plan struct {
	paths [][]strictjson.Step
	// rest, with one path, holds the elements of the root chain
	// evaluated after it, on what it selects: the multi-select in
	// `powertools_json(body).[amount, currency]`.
	rest []*node
	// list is set when the chain is followed by a multi-select list of
	// paths, such as `powertools_json(body).[amount, currency]`: then
	// paths[0] is the chain, ending in a Type step, and each other path is
	// the chain and an element of the list. The value is read as it
	// would be by following the chain, then the elements, without
	// decoding what the chain selects.
	list bool
}

// result makes the expression's value from the values of p.paths.
func (p *plan) result(e *Expression, values []any) (any, error) {
	switch {
	case p.list:
		// A multi-select of null is null; of anything else, the list.
		if t, _ := values[0].(string); t == "" || t == "null" {
			return nil, nil
		}
		return append([]any(nil), values[1:]...), nil
	case p.rest != nil:
		return e.strict.chain(p.rest, values[0])
	}
	return values[0], nil
}

// planPath returns the plan of an expression that starts with a chain of
// fields, indexes and powertools_json calls, or nil.
func planPath(root *node, limit int) *plan {
	if root.kind != nSubexpr {
		if steps, ok := appendPath(nil, root, limit); ok && len(steps) > 0 {
			return &plan{paths: [][]strictjson.Step{steps}}
		}
		return nil
	}
	var steps []strictjson.Step
	var rest []*node
	for i, c := range root.children {
		more, ok := appendPath(steps, c, limit)
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
		if p := planList(steps, rest[0], limit); p != nil {
			return p
		}
	}
	return &plan{paths: [][]strictjson.Step{steps}, rest: rest}
}

// planList returns the plan of chain followed by the element list, when
// that is the last element of the root chain and a multi-select list of
// paths of fields and indexes, or nil. (A powertools_json call in an
// element could fail where the chain selects null, whose multi-select is
// null without evaluating anything.)
func planList(chain []strictjson.Step, list *node, limit int) *plan {
	if list.kind != nMultiList {
		return nil
	}
	probe := append(chain[:len(chain):len(chain)], strictjson.Step{Kind: strictjson.Type})
	p := &plan{paths: [][]strictjson.Step{probe}, list: true}
	for _, c := range list.children {
		elem, ok := appendPath(chain[:len(chain):len(chain)], c, limit)
		if !ok || len(elem) == len(chain) || slices.ContainsFunc(elem[len(chain):], isDocument) {
			return nil
		}
		p.paths = append(p.paths, elem)
	}
	return p
}

func isDocument(st strictjson.Step) bool { return st.Kind == strictjson.Document }

// jsonError maps an error of the strict scanner to this package's errors:
// a powertools_json step on a non-string is the type error Search gives
// for it, a document past the decode limit is the error that function
// gives for it, and anything else in a document held in a string is that
// function's invalid value.
func jsonError(err error) error {
	var typeErr *strictjson.TypeError
	if errors.As(err, &typeErr) {
		return &InvalidTypeError{Function: "powertools_json", Want: TypeString, Got: typeErr.Got}
	}
	var limitErr *strictjson.LimitError
	if errors.As(err, &limitErr) {
		return tooLarge("powertools_json", limitErr.Limit, limitErr.Len)
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
	return &InvalidValueError{Msg: "ambiguous JSON document", Err: err}
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
// indexes and powertools_json calls, whose Document steps decode no more
// than limit bytes.
func appendPath(steps []strictjson.Step, n *node, limit int) ([]strictjson.Step, bool) {
	ok := true
	switch n.kind {
	case nCurrent:
	case nField:
		steps = append(steps, strictjson.Step{Kind: strictjson.Member, Name: n.name})
	case nSubexpr:
		for _, c := range n.children {
			if steps, ok = appendPath(steps, c, limit); !ok {
				break
			}
		}
	case nIndex:
		if n.index < 0 {
			return nil, false
		}
		steps = append(steps, strictjson.Step{Kind: strictjson.Index, Index: n.index})
	case nFunction:
		if n.fn != powertoolsJSON || len(n.children) != 1 {
			return nil, false
		}
		if steps, ok = appendPath(steps, n.children[0], limit); ok {
			steps = append(steps, strictjson.Step{Kind: strictjson.Document, Limit: limit})
		}
	default:
		ok = false
	}
	return steps, ok
}
