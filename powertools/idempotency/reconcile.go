package idempotency

import (
	"context"
	"errors"
	"reflect"
	"time"
)

// reconcileFunc is a reconcile function on encoded responses.
type reconcileFunc func(ctx context.Context, key string) (resp []byte, happened bool, err error)

// WithReconcile sets how an UNCERTAIN key (see [Uncertain]) is resolved:
// the next duplicate takes the record over under a lease, so that two
// invocations never reconcile one key at once, and calls fn with the key.
// fn asks the downstream, by that key (the one the handler passed on, from
// [KeyFromContext]), what happened:
//
//   - it happened: return its result and true. The record becomes COMPLETE
//     with that result, encoded as the handler's would be, and the
//     duplicate gets it; the handler does not run.
//   - it did not: return false. The handler runs, once, under the same
//     lease, as on a first call.
//   - it cannot tell: return an error. The record stays UNCERTAIN and the
//     duplicate gets an [*UncertainError] wrapping the error.
//
// Out must be the wrapped handler's (or function's) Out; otherwise
// building the wrapper fails with a [*ConfigError], rather than every duplicate failing to decode the
// reconciled result for the whole expiry window. (Go cannot check the type
// when the code compiles: an option does not know the handler's types.)
//
// Default: none: an UNCERTAIN key is resolved by an operator, who deletes
// the record (the next duplicate runs the handler) once the downstream
// says the effect did not happen, or lets it expire.
func WithReconcile[Out any](fn func(ctx context.Context, key string) (result Out, happened bool, err error)) Option {
	return func(o *options) {
		if fn == nil {
			o.reconcile, o.reconcileOut = nil, nil
			return
		}
		o.set("WithReconcile")
		o.reconcileOut = reflect.TypeFor[Out]()
		o.reconcile = func(ctx context.Context, key string) ([]byte, bool, error) {
			out, happened, err := fn(ctx, key)
			if err != nil || !happened {
				return nil, false, err
			}
			resp, err := encode(out)
			return resp, true, unwrapEncode(err)
		}
	}
}

// resolve answers a duplicate of the UNCERTAIN record existing.
func (e *engine) resolve(ctx context.Context, existing *Record, hash string, payload []byte, fn call, now time.Time) (result, error) {
	key := existing.Key
	if err := e.checkPayload(key, existing, hash); err != nil {
		return result{key: key, outcome: OutcomeConflict}, err
	}
	uncertain := result{key: key, outcome: OutcomeUncertain}
	if e.reconcile == nil {
		return uncertain, &UncertainError{Key: key}
	}
	if now.Before(existing.LeaseEnd) {
		return uncertain, &UncertainError{Key: key, LeaseEnd: existing.LeaseEnd}
	}
	l := &lease{rec: Record{
		Key:         key,
		Status:      StatusUncertain,
		Expiry:      now.Add(e.expiresAfter),
		LeaseEnd:    e.leaseEnd(ctx, now),
		LeaseToken:  newLeaseToken(),
		PayloadHash: existing.PayloadHash,
	}}
	rec := &l.rec
	l.leaseEnd = rec.LeaseEnd
	if err := e.store.Reclaim(ctx, rec, existing.LeaseToken); err != nil {
		if errors.Is(err, ErrLeaseLost) {
			// Another invocation reclaimed it first and is reconciling.
			return uncertain, &UncertainError{Key: key}
		}
		return result{key: key, outcome: OutcomeStoreError}, storeError("reclaim", key, err)
	}
	resp, happened, err := e.reconcile(withKey(ctx, key), key)
	switch {
	case err != nil:
		e.hold(writeContext(ctx), l)
		return uncertain, &UncertainError{Key: key, Err: err}
	case happened:
		// The effect happened: the reconciled result is stored and
		// returned as a replay would be.
		outcome, err := e.complete(writeContext(ctx), l, resp, false)
		if err != nil {
			return result{key: key, outcome: outcome}, err
		}
		return result{response: resp, key: key, outcome: OutcomeReplayed, completedAt: l.rec.CompletedAt}, nil
	}
	return e.own(ctx, l, payload, fn)
}
