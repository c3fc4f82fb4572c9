package idempotency

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/gopowertools/lambda/internal/keyformat"
	"github.com/gopowertools/lambda/powertools/idempotency/internal/typedoor"
)

// WrapFunc makes fn idempotent on its argument, for an effect inside a
// handler (Powertools' idempotent_function), and panics with a
// [*ConfigError] when the configuration is invalid, so that a
// misconfigured function fails at cold start (a test can recover it). The
// argument is encoded to JSON by json.Marshal, and those bytes are read as
// an event is: the key is taken from them
// ([WithEventKey] selects part of it; default: all of it), under the rules
// of docs/security.md, which hold inside json.RawMessage values and JSON
// held in strings too. The key prefix is "<function>.<name>", the Lambda
// function's name (AWS_LAMBDA_FUNCTION_NAME) and name, as in Powertools, so
// that functions sharing a table keep their records apart; outside Lambda,
// with no function name, it is name alone. Give each wrapped function of a
// Lambda function its own name. A repeated argument gets the stored
// result, decoded into Out, without running fn.
//
// Its argument and result types are checked when it is wrapped: a
// struct whose promoted MarshalJSON leaves its own fields out, or a
// result that JSON cannot give back as the function returned it (an
// interface, a dropped field), is a *ConfigError (docs/security.md).
//
// The event-shaped environment variables (event key, payload validation,
// key prefix, Python handler) do not apply to a function; the others, such
// as POWERTOOLS_IDEMPOTENCY_DISABLED, POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER
// and POWERTOOLS_IDEMPOTENCY_COMPATIBILITY, do.
func WrapFunc[In, Out any](name string, store Store, fn func(context.Context, In) (Out, error), opts ...Option) func(context.Context, In) (Out, error) {
	if fn == nil {
		panic(&ConfigError{Name: "fn", Err: errors.New("function is nil")})
	}
	e, err := build(store, wrapper{kind: funcKind, name: name, in: reflect.TypeFor[In](), out: reflect.TypeFor[Out]()}, opts)
	if err != nil {
		panic(err)
	}
	holdsAny, err := typedoor.FuncTypes(reflect.TypeFor[In](), reflect.TypeFor[Out]())
	if err != nil {
		panic(&ConfigError{Name: "fn", Err: err})
	}
	if e.disabled {
		return fn
	}
	call := func(ctx context.Context, in In) (result, Out, error) {
		var zero Out
		arg, err := json.Marshal(in)
		if err != nil {
			return result{}, zero, &InvalidEventError{Err: fmt.Errorf("encode the argument of %s: %w", name, err)}
		}
		if keyformat.ReplacedText(arg) {
			return result{}, zero, &InvalidEventError{Err: fmt.Errorf("the argument of %s holds text that is not valid UTF-8, which JSON cannot encode faithfully", name)}
		}
		if holdsAny && typedoor.BytesInAny(reflect.ValueOf(&in).Elem()) {
			return result{}, zero, &InvalidEventError{Err: fmt.Errorf("the argument of %s: %w", name, typedoor.ErrBytesInAny)}
		}
		var out Out
		res, err := e.do(ctx, arg, func(ctx context.Context, _ []byte) ([]byte, error) {
			var err error
			if out, err = fn(ctx, in); err != nil {
				return nil, err
			}
			return encode(out)
		})
		switch {
		case err != nil:
			return res, zero, err
		case !res.replayed():
			return res, out, nil
		}
		stored, err := decodeStored[Out](res)
		if err != nil {
			return result{key: res.key}, zero, err
		}
		return res, stored, nil
	}
	return func(ctx context.Context, in In) (Out, error) {
		start := e.startTimer()
		res, out, err := call(ctx, in)
		e.observe(ctx, start, res, err)
		return out, err
	}
}
