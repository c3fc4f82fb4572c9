package jmespath

import (
	"errors"

	"github.com/gopowertools/lambda/internal/strictjson"
)

// SearchJSON evaluates the expression against the JSON document raw, with
// numbers as json.Number. On a document it accepts, the result is the one
// Search gives on the document decoded by encoding/json with UseNumber.
//
// It refuses, with an [*InvalidValueError] wrapping the reason, a document
// that is not JSON, and one that encoding/json's decoding into a struct
// could read otherwise than a map does (see internal/strictjson): member
// names that are equal, or equal under the Unicode case folding that
// encoding/json uses to match struct fields, where they matter. On an
// expression that is a chain of field names, non-negative indexes and
// powertools_json calls, such as `requestContext.requestId` or
// `powertools_json(body).order_id`, that is where they meet the path or lie
// inside the selected value; the document is read in one pass that
// validates all of it and decodes only the selected value. Any other
// expression decodes the whole document, and refuses such names in any
// object. powertools_json, wherever it is called, decodes its document the
// same way. Where the expression is evaluated on a decoded value, a field
// absent from an object in which a case variant of its name is present is
// refused as well, since encoding/json would fill the field from it.
func (e *Expression) SearchJSON(raw []byte) (result any, err error) {
	defer guard(&err)
	if e.path != nil {
		v, err := strictjson.Find(raw, e.path)
		if err != nil {
			return nil, jsonError(err)
		}
		if e.rest == 0 {
			return v, nil
		}
		return e.strict.chain(e.rest, v)
	}
	doc, err := strictjson.Decode(raw)
	if err != nil {
		return nil, jsonError(err)
	}
	return e.strict.eval(e.strict.root(), doc)
}

// SearchJSONAll is [Expression.SearchJSON] for several expressions on one
// document, read once: results[i] is what exprs[i] selects. When every
// expression starts with a chain of fields, indexes and powertools_json
// calls, the document is read in one pass that follows all of them;
// otherwise it is decoded whole, once. The error, if any, is the first
// met, whichever expression it concerns; SearchJSON on each expression
// tells them apart.
func SearchJSONAll(raw []byte, exprs ...*Expression) (results []any, err error) {
	defer guard(&err)
	paths := make([][]strictjson.Step, len(exprs))
	for i, e := range exprs {
		if e.path == nil {
			paths = nil
			break
		}
		paths[i] = e.path
	}
	if paths == nil {
		doc, err := strictjson.Decode(raw)
		if err != nil {
			return nil, jsonError(err)
		}
		results = make([]any, len(exprs))
		for i, e := range exprs {
			if results[i], err = e.strict.eval(e.strict.root(), doc); err != nil {
				return nil, err
			}
		}
		return results, nil
	}
	if results, err = strictjson.FindAll(raw, paths...); err != nil {
		return nil, jsonError(err)
	}
	for i, e := range exprs {
		if e.rest != 0 {
			if results[i], err = e.strict.chain(e.rest, results[i]); err != nil {
				return nil, err
			}
		}
	}
	return results, nil
}

// jsonError maps an error of the strict scanner to this package's errors:
// a powertools_json step on a non-string is the type error Search gives
// for it, and anything else in a document held in a string is that
// function's invalid value.
func jsonError(err error) error {
	var typeErr *strictjson.TypeError
	if errors.As(err, &typeErr) {
		return &InvalidTypeError{Function: "powertools_json", Want: TypeString, Got: typeErr.Got}
	}
	var syntaxErr *strictjson.SyntaxError
	if errors.As(err, &syntaxErr) {
		if syntaxErr.Quoted {
			return &InvalidValueError{Function: "powertools_json", Msg: "invalid JSON", Err: err}
		}
		return &InvalidValueError{Msg: "invalid JSON document", Err: err}
	}
	var dupErr *strictjson.DuplicateNameError
	if errors.As(err, &dupErr) && dupErr.Quoted {
		return &InvalidValueError{Function: "powertools_json", Msg: "ambiguous JSON", Err: err}
	}
	return &InvalidValueError{Msg: "ambiguous JSON document", Err: err}
}

// planPath returns the steps of the expression, or of the longest chain of
// elements that starts it, that SearchJSON can follow with strictjson.Find,
// and the first element left to evaluate on what they select (0: none).
// `powertools_json(body).[amount, currency]` is the path
// `powertools_json(body)`, then the multi-select on the body alone.
func planPath(t *tree) (steps []strictjson.Step, rest int32) {
	root := t.root()
	if root.kind != nSubexpr {
		if steps, ok := appendPath(t, nil, root); ok && len(steps) > 0 {
			return steps, 0
		}
		return nil, 0
	}
	for i := root.left; i != 0; i = t.nodes[i].next {
		more, ok := appendPath(t, steps, &t.nodes[i])
		if !ok {
			rest = i
			break
		}
		steps = more
	}
	if len(steps) == 0 {
		return nil, 0
	}
	return steps, rest
}

func appendPath(t *tree, steps []strictjson.Step, n *node) ([]strictjson.Step, bool) {
	ok := true
	switch n.kind {
	case nCurrent:
	case nField:
		steps = append(steps, strictjson.Step{Kind: strictjson.Member, Name: t.name(n)})
	case nSubexpr:
		for i := n.left; i != 0 && ok; i = t.nodes[i].next {
			steps, ok = appendPath(t, steps, &t.nodes[i])
		}
	case nIndex:
		if n.index() < 0 {
			return nil, false
		}
		steps = append(steps, strictjson.Step{Kind: strictjson.Index, Index: n.index()})
	case nFunction:
		if t.fn(n) != powertoolsJSON || n.count() != 1 {
			return nil, false
		}
		if steps, ok = appendPath(t, steps, t.at(n.left)); ok {
			steps = append(steps, strictjson.Step{Kind: strictjson.Document})
		}
	default:
		ok = false
	}
	return steps, ok
}
