package idempotency

import (
	"slices"

	"github.com/gopowertools/lambda/internal/keyformat"
	"github.com/gopowertools/lambda/jmespath"
)

// An invocation's key and payload hash are read from its request before
// any store call, in the format of internal/keyformat: this library's,
// or a Powertools runtime's ([WithCompatibility]).

// keyOf returns the key and the payload hash of payload, before any
// store call; the key is "" when the event has no key and none is
// required.
func (e *engine) keyOf(payload []byte) (key, hash string, err error) {
	keyValue, validated, err := e.readRequest(payload)
	if err != nil {
		return "", "", err
	}
	if missing(keyValue, e.keyMulti) {
		if e.keyRequired {
			return "", "", &MissingKeyError{Expression: e.keyExpr.String()}
		}
		return "", "", nil
	}
	if key, err = e.keys.Key(e.prefix, keyValue); err != nil {
		return "", "", &InvalidEventError{Expression: e.keyExpr.String(), Err: inexact(err)}
	}
	if hash, err = e.payloadHash(validated); err != nil {
		return "", "", err
	}
	return key, hash, nil
}

// readRequest returns what the key and the validation expressions select
// in payload, or an *InvalidEventError. It is the one reading of a
// request, whichever entry point turned it into bytes (an event, a typed
// handler's event, a function wrapper's argument, an HTTP request):
// jmespath's SearchJSONAll reads it in one pass for both expressions,
// within one decoding budget (WithDecodeLimit), with a strict scanner
// that validates all of it and refuses text that a struct decoding could
// read otherwise than the search does (docs/security.md); the type door
// then reads what the handler's type reads otherwise. So the key, the
// payload hash and the user's code see one request.
func (e *engine) readRequest(payload []byte) (key, validated any, err error) {
	values, err := jmespath.SearchJSONAll(payload, e.exprs...)
	if err != nil {
		return nil, nil, e.invalidEvent(err)
	}
	key = values[0]
	if e.validation != nil {
		validated = values[1]
	}
	if e.types != nil {
		if key, validated, err = e.types.Read(payload, key, validated, values[len(values)-len(e.types.Probes):]); err != nil {
			return nil, nil, e.invalidEvent(err)
		}
	}
	return key, validated, nil
}

// invalidEvent is the *InvalidEventError of a request that err refused,
// naming the expression that met it.
func (e *engine) invalidEvent(err error) error {
	if xe, ok := err.(*jmespath.ExpressionError); ok {
		return &InvalidEventError{Expression: xe.Expression.String(), Err: xe.Err}
	}
	return &InvalidEventError{Expression: e.keyExpr.String(), Err: err}
}

// payloadHash returns the hash of v, what the validation expression
// selected (nothing hashes as null), or "" when validation is off.
func (e *engine) payloadHash(v any) (string, error) {
	if e.validation == nil {
		return "", nil
	}
	h, err := e.keys.Digest(v)
	if err != nil {
		return "", &InvalidEventError{Expression: e.validation.String(), Err: inexact(err)}
	}
	return h, nil
}

// inexact returns err, or the *InexactNumberError it stands for.
func inexact(err error) error {
	if e, ok := err.(*keyformat.InexactError); ok {
		return &InexactNumberError{Compatibility: Compatibility(e.Mode), Path: e.Path, Number: e.Number}
	}
	return err
}

// missing reports whether v, what the key expression selected, counts as
// no key at all: null, "", [], {}, an array holding a null, or, when the
// expression is a multi-select (multi), an object holding a null. 0 and
// false are keys: a caller may well number its requests from zero. An
// array or object with a null is what a multi-select key such as
// [customer_id, order_id] or {c: customer_id, o: order_id} gives when one
// of its paths is absent; the others alone would key the event, and a
// customer's second order would get the first one's response. An object
// that the expression selects as it is in the event (the whole event, say)
// may hold nulls of its own, and is a key.
func missing(v any, multi bool) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0 || slices.Contains(v, nil)
	case map[string]any:
		if multi {
			for _, m := range v {
				if m == nil {
					return true
				}
			}
		}
		return len(v) == 0
	}
	return false
}
