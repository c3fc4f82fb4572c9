package idempotency

import (
	"context"
	"errors"
	"reflect"
)

// Handler is an idempotent Lambda handler: pass it to lambda.Start from
// github.com/aws/aws-lambda-go, which accepts any value with its Invoke
// method. Build one with [Wrap] or [New]; the zero Handler returns a
// [*ConfigError] from every call. A Handler is safe for concurrent use.
type Handler struct {
	engine *engine
	invoke call // decodes the event, runs the user's function, encodes
}

// Wrap makes fn idempotent, and panics with a [*ConfigError] when an option
// or an environment variable is invalid, or an expression cannot be read
// as In decodes the event, so that a misconfigured function fails at cold
// start ([New] returns the error instead). A repeated event, as
// identified by its key (see [WithEventKey]), read as encoding/json
// decodes the event into In (docs/security.md), gets the response stored
// for the first one instead of running fn again.
func Wrap[In, Out any](store Store, fn func(context.Context, In) (Out, error), opts ...Option) *Handler {
	h, err := New(store, fn, opts...)
	if err != nil {
		panic(err)
	}
	return h
}

// New is [Wrap] returning its configuration error instead of panicking,
// for a test or a tool that checks a configuration.
func New[In, Out any](store Store, fn func(context.Context, In) (Out, error), opts ...Option) (*Handler, error) {
	if fn == nil {
		return nil, &ConfigError{Name: "fn", Err: errors.New("handler is nil")}
	}
	e, err := build(store, wrapper{kind: handlerKind, in: reflect.TypeFor[In](), out: reflect.TypeFor[Out]()}, opts)
	if err != nil {
		return nil, err
	}
	return &Handler{engine: e, invoke: adapt(e, fn)}, nil
}

// Invoke handles one event. The key and the validated payload are selected
// from the raw event; the event is decoded into In only when fn runs, and
// the response is encoded once, stored, and returned. A duplicate gets the
// stored bytes. The bytes returned are the caller's: a local cache keeps
// its own copy. fn's own error is returned unchanged; the other errors are
// listed in the package documentation.
func (h *Handler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	if h == nil || h.engine == nil {
		return nil, &ConfigError{Name: "Handler", Err: errors.New("not built with Wrap or New")}
	}
	if h.engine.disabled {
		resp, err := h.invoke(ctx, payload)
		if err != nil {
			return nil, unwrapEncode(err)
		}
		return resp, nil
	}
	start := h.engine.startTimer()
	res, err := h.engine.do(ctx, payload, h.invoke)
	h.engine.observe(ctx, start, res, err)
	if err != nil {
		return nil, err
	}
	return res.response, nil
}

// KeyOf returns the idempotency key and the payload hash (empty without
// payload validation) that an invocation with event would use, computed
// as Invoke computes them, without a store call or running the handler:
// the key to look a record up by, in a test or an operator's tool. The
// key is "" when the event has none and none is required. Its errors are
// the ones Invoke returns for such an event: [*InvalidEventError],
// [*MissingKeyError], or a [*ConfigError] for the zero Handler. A
// disabled Handler computes them too (with an empty key prefix when it
// has none).
func (h *Handler) KeyOf(event []byte) (key, payloadHash string, err error) {
	if h == nil || h.engine == nil {
		return "", "", &ConfigError{Name: "Handler", Err: errors.New("not built with Wrap or New")}
	}
	return h.engine.keyOf(event)
}

// adapt turns fn into a call on raw JSON. Like aws-lambda-go, it decodes
// with encoding/json (with e's decoding options) and encodes without HTML
// escaping, so wrapping a handler does not change its response bytes. An
// event that does not decode is an *UndecodableEventError, and fn does not
// run: the engine tells it from fn's own errors by its type.
func adapt[In, Out any](e *engine, fn func(context.Context, In) (Out, error)) call {
	return func(ctx context.Context, payload []byte) ([]byte, error) {
		var in In
		if err := e.decodeEvent(payload, &in); err != nil {
			return nil, &UndecodableEventError{Type: reflect.TypeFor[In]().String(), Err: err}
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		return encode(out)
	}
}
