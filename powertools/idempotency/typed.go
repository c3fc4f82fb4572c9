package idempotency

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// Typed is fn made idempotent with its types kept: [Typed.Call] runs an
// invocation and returns fn's result as an Out, and whether it was a
// replay, for code that goes on with it (an HTTP adapter, a typed
// middleware chain); [Typed.Invoke] is the byte-level handler that
// lambda.Start takes, as [Handler.Invoke]. Build one with [NewTyped], with
// the options of [New]. A Typed is safe for concurrent use.
type Typed[In, Out any] struct {
	*Handler
	fn func(context.Context, In) (Out, error)
}

// NewTyped is [New] keeping fn's types. It returns a [*ConfigError] when an
// option or an environment variable is invalid.
func NewTyped[In, Out any](store Store, fn func(context.Context, In) (Out, error), opts ...Option) (*Typed[In, Out], error) {
	if fn == nil {
		return nil, &ConfigError{Name: "fn", Err: errors.New("handler is nil")}
	}
	e, err := build(store, handlerKind, "", reflect.TypeFor[Out](), opts)
	if err != nil {
		return nil, err
	}
	return &Typed[In, Out]{Handler: &Handler{engine: e, invoke: adapt(e, fn)}, fn: fn}, nil
}

// Call runs one invocation on the raw event payload, as [Handler.Invoke]
// does, and returns fn's result: the one fn has just returned, or the
// stored one decoded into Out for a replay (replayed is then true; with
// [WithReplayHook], the hook's). The errors are Invoke's; a stored
// response that does not decode into Out is a [*CorruptedRecordError].
func (t *Typed[In, Out]) Call(ctx context.Context, payload []byte) (out Out, replayed bool, err error) {
	var zero, fresh Out
	if t == nil || t.Handler == nil || t.engine == nil {
		return zero, false, &ConfigError{Name: "Typed", Err: errors.New("not built with NewTyped")}
	}
	run := func(ctx context.Context, payload []byte) ([]byte, error) {
		var in In
		if err := t.engine.decodeEvent(payload, &in); err != nil {
			return nil, err
		}
		o, err := t.fn(ctx, in)
		if err != nil {
			return nil, err
		}
		fresh = o
		return encode(o)
	}
	if t.engine.disabled {
		_, err := run(ctx, payload)
		if err != nil {
			return zero, false, unwrapEncode(err)
		}
		return fresh, false, nil
	}
	start := t.engine.startTimer()
	res, err := t.engine.do(ctx, payload, run)
	replayed = err == nil && res.replayed()
	if replayed {
		// Decoded before the observer hears of it, as a function
		// wrapper's is: a stored response that does not decode is the
		// outcome, not a replay.
		if fresh, err = decodeStored[Out](res); err != nil {
			res.outcome = OutcomeStoreError
		}
	}
	t.engine.observe(ctx, start, res, err)
	if err != nil {
		return zero, replayed, err
	}
	return fresh, replayed, nil
}

// decodeStored decodes the response of a replay into Out: a stored
// response that does not decode is a *CorruptedRecordError.
func decodeStored[Out any](res result) (Out, error) {
	var stored, zero Out
	if err := json.Unmarshal(res.response, &stored); err != nil {
		return zero, &CorruptedRecordError{Key: res.key, Reason: fmt.Sprintf("the stored response does not decode into %T: %v", stored, err)}
	}
	return stored, nil
}
