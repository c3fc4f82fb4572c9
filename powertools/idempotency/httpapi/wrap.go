package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/internal/adapters"
)

// Wrap makes fn idempotent behind an HTTP front end, and panics with an
// [*idempotency.ConfigError] when an option or an environment variable is
// invalid, so that a misconfigured function fails at cold start ([New]
// returns the error instead). Pass what it returns to lambda.Start.
func Wrap[Req Request, Resp Response](store idempotency.Store, fn func(context.Context, Req) (Resp, error), opts ...Option) func(context.Context, Req) (Resp, error) {
	h, err := New(store, fn, opts...)
	if err != nil {
		panic(err)
	}
	return h
}

// New is [Wrap] returning its configuration error instead of panicking: an
// [*idempotency.ConfigError] for an invalid option of this package's or
// the middleware's, an environment variable, or a Resp that does not go
// with Req.
func New[Req Request, Resp Response](store idempotency.Store, fn func(context.Context, Req) (Resp, error), opts ...Option) (func(context.Context, Req) (Resp, error), error) {
	req, resp := reflect.TypeFor[Req](), reflect.TypeFor[Resp]()
	if want := responseOf[req]; resp != want {
		return nil, &idempotency.ConfigError{Name: "fn", Err: fmt.Errorf("it takes %v and returns %v; a handler of %v returns %v", req, resp, req, want)}
	}
	c := config{replayed: defaultReplayedHeader, typeBase: blankType}
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	if err := c.check(req); err != nil {
		return nil, err
	}
	// fn gets the request lambda.Start decoded, as a function wrapper's
	// function gets its argument: the middleware reads the request's JSON,
	// with the key header's scope added, and nothing decodes it again. To
	// the middleware, the handler takes that JSON as it is: text it reads
	// itself, with no Go type of its own to follow.
	run := func(ctx context.Context, _ json.RawMessage) (Resp, error) {
		c := ctx.Value(callKey{}).(*call[Req, Resp])
		resp, err := fn(ctx, c.req)
		if err == nil {
			c.resp, c.ran = resp, true
		}
		return resp, err
	}
	h, err := idempotency.New(store, run, c.middlewareOptions()...)
	if err != nil {
		return nil, err
	}
	a := &adapter[Req, Resp]{handler: h, config: c, now: time.Now}
	return a.handle, nil
}

// adapter is one wrapped handler.
type adapter[Req Request, Resp Response] struct {
	handler *idempotency.Handler
	config
	now func() time.Time // for Retry-After: the lease ends on the real clock
}

// call is one request: the wrapped handler gets req, and gives back its
// response, so that handle knows it from a replay without decoding it.
type call[Req Request, Resp Response] struct {
	req  Req
	resp Resp
	ran  bool
}

// callKey is the context key under which handle gives the wrapped
// handler its *call.
type callKey struct{}

// handle answers one request: the handler's response, the stored one for
// a replay, or a problem for an outcome of the middleware's.
func (a *adapter[Req, Resp]) handle(ctx context.Context, req Req) (Resp, error) {
	var zero Resp
	r := view(req)
	// The middleware reads the key and the payload from the request's
	// JSON; the handler gets req.
	event, err := json.Marshal(req)
	if err != nil {
		return zero, err
	}
	if a.keyHeader {
		key, present, err := readKey(r.headers, r.multi)
		if err != nil {
			return respond[Resp](r, keyProblem(err).withType(a.typeBase)), nil
		}
		if present {
			s := scope{Method: r.method, Path: r.path, Key: key}
			if a.client != nil {
				s.Client = a.client(req)
			}
			if event, err = withScope(event, s); err != nil {
				return zero, err
			}
		}
	}
	c := &call[Req, Resp]{req: req}
	out, err := a.handler.Invoke(context.WithValue(ctx, callKey{}, c), event)
	if err == nil && !c.ran { // a replay
		if json.Unmarshal(out, &c.resp) != nil {
			// The key, which only the error names, is read again
			// only then.
			key, _, _ := a.handler.KeyOf(event)
			err = adapters.DecodeResponse(key, out, &c.resp)
		}
	}
	if err != nil {
		if p, ok := problemFor(err, a.now(), a.keyHeader); ok {
			return respond[Resp](r, p.withType(a.typeBase)), nil
		}
		return zero, err
	}
	if !c.ran && a.replayed != "" {
		return markReplayed(c.resp, r, a.replayed), nil
	}
	return c.resp, nil
}
