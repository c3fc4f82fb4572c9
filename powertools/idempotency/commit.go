package idempotency

import (
	"context"
	"errors"
)

// Invoker is an optional interface of a [Store] that commits an
// invocation's own writes together with its COMPLETE record, as
// github.com/gopowertools/lambda/dynamo.Store does with one
// TransactWriteItems.
//
// Before the handler runs, the middleware calls NewInvocation and gives the
// handler the context it returns, so the store can keep the invocation's
// staged writes on it; the middleware then passes that same context to
// Complete. The idempotency package never sees the staged writes: it only
// carries the context from the one call to the other.
type Invoker interface {
	NewInvocation(ctx context.Context) context.Context
}

// Errors a Store's Complete returns when it commits an invocation's staged
// writes with the record, so that the middleware knows whether the effect
// happened.
var (
	// ErrNotCommitted means nothing was committed: neither the staged
	// writes nor the COMPLETE record. When it comes with [ErrLeaseLost],
	// another invocation holds the key and its record is left alone;
	// otherwise the staged writes were refused (a condition of the
	// handler's failed, a limit was passed) and the middleware releases the
	// key and returns the error to the caller as the handler's own.
	ErrNotCommitted = errors.New("idempotency: nothing was committed: neither the handler's staged writes nor the record")
	// ErrCommitUnknown means the store cannot tell whether the staged
	// writes and the record were committed (the request failed and the
	// record could not be read back). The record tells later: COMPLETE if
	// they were, IN_PROGRESS until its lease ends if not. The middleware
	// keeps the record and returns a [*PersistenceError].
	ErrCommitUnknown = errors.New("idempotency: unknown whether the handler's staged writes and the record were committed")
)

// invocation returns the context the handler runs with: ctx with the key
// of l, and with a staging place when the store has one.
func (e *engine) invocation(ctx context.Context, l *lease) context.Context {
	if e.invoker != nil {
		ctx = e.invoker.NewInvocation(ctx)
	}
	l.ctx = keyContext{Context: ctx, key: l.rec.Key, set: true}
	return &l.ctx
}
