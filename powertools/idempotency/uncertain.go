package idempotency

import (
	"context"
	"fmt"
	"time"
)

// UncertainError says that an effect may or may not have happened, such as
// a charge whose request timed out after the provider received it.
//
// A handler returns one, made with [Uncertain], to keep its key: the record
// becomes UNCERTAIN instead of being released, and the handler is not run
// again for that key until the outcome is known. The handler's caller gets
// the handler's error unchanged.
//
// A duplicate of an UNCERTAIN key gets an UncertainError with Key set. With
// [WithReconcile], the duplicate first asks the reconcile function, and gets
// an UncertainError only when it cannot tell (Err is then its error) or
// another invocation is reconciling the key (until LeaseEnd).
type UncertainError struct {
	// Key is the idempotency key; "" on the error a handler returns.
	Key string
	// LeaseEnd is when the invocation reconciling the key gives it up, or
	// zero.
	LeaseEnd time.Time
	// Err is the cause: the handler's error, or the reconcile function's.
	Err error
}

// Uncertain marks err as an uncertain outcome (see [UncertainError]). A nil
// err stays nil.
func Uncertain(err error) error {
	if err == nil {
		return nil
	}
	return &UncertainError{Err: err}
}

func (e *UncertainError) Error() string {
	msg := "idempotency: uncertain outcome"
	if e.Key != "" {
		msg = fmt.Sprintf("idempotency: the outcome for key %q is uncertain and must be reconciled", e.Key)
	}
	if !e.LeaseEnd.IsZero() {
		msg += fmt.Sprintf(" (being reconciled until %s)", e.LeaseEnd.UTC().Format(time.RFC3339Nano))
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *UncertainError) Unwrap() error { return e.Err }

// hold keeps the key of a handler whose outcome is uncertain: the record
// becomes UNCERTAIN, with its lease token and no lease, until it expires or
// is reconciled. The handler's staged writes, if any, are not committed:
// the store commits them only with a COMPLETE record.
func (e *engine) hold(ctx context.Context, l *lease) {
	rec := &l.rec
	*rec = Record{
		Key:         rec.Key,
		Status:      StatusUncertain,
		Expiry:      e.now().Add(e.expiresAfter),
		LeaseToken:  rec.LeaseToken,
		PayloadHash: rec.PayloadHash,
	}
	if err := e.store.Complete(ctx, rec); err != nil {
		e.log().ErrorContext(ctx, "idempotency: could not mark the outcome UNCERTAIN; the key stays IN_PROGRESS until the lease ends, and the handler RUNS AGAIN after it", "key", rec.Key, "lease_end", l.leaseEnd, "error", err)
	}
}
