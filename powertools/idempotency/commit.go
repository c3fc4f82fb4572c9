package idempotency

import (
	"context"
	"fmt"
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

// CommitError is what the Complete of a Store that commits an invocation's
// staged writes with its COMPLETE record (an [Invoker]) returns when they
// were not committed, or when it cannot tell whether they were. The
// middleware acts on State, and Err is why.
type CommitError struct {
	Key   string
	State CommitState
	Err   error
}

// CommitState is what became of an invocation's staged writes and its
// COMPLETE record when they could not be committed.
type CommitState int

const (
	// CommitRefused: the staged writes were refused (a condition of the
	// handler's failed, a limit was passed) and nothing was committed.
	// The middleware releases the key and returns Err to the caller as
	// the handler's own error: the handler failed.
	CommitRefused CommitState = iota + 1
	// CommitLeaseLost: another invocation holds the key, so nothing was
	// committed. The middleware leaves that invocation's record alone and
	// returns a [*PersistenceError].
	CommitLeaseLost
	// CommitUnknown: the request failed and the record could not be read
	// back. The record tells later: COMPLETE if the writes were
	// committed, IN_PROGRESS until its lease ends if not. The middleware
	// keeps it and returns a [*PersistenceError].
	CommitUnknown
)

func (s CommitState) String() string {
	switch s {
	case CommitRefused:
		return "refused"
	case CommitLeaseLost:
		return "lease lost"
	case CommitUnknown:
		return "unknown"
	}
	return fmt.Sprintf("CommitState(%d)", int(s))
}

func (e *CommitError) Error() string {
	var what string
	switch e.State {
	case CommitRefused:
		what = "the staged writes were refused; nothing was committed"
	case CommitLeaseLost:
		what = "the lease was lost; nothing was committed"
	case CommitUnknown:
		what = "unknown whether the staged writes and the record were committed"
	default:
		what = e.State.String()
	}
	return fmt.Sprintf("idempotency: complete %q: %s: %v", e.Key, what, e.Err)
}

func (e *CommitError) Unwrap() error { return e.Err }

// invocation returns the context the handler runs with: ctx with the key
// of l, and with a staging place when the store has one.
func (e *engine) invocation(ctx context.Context, l *lease) context.Context {
	if e.invoker != nil {
		ctx = e.invoker.NewInvocation(ctx)
	}
	l.ctx = keyContext{Context: ctx, key: l.rec.Key, set: true}
	return &l.ctx
}
