package idempotency

import (
	"context"
	"errors"
	"time"
)

// completeRetryDelays are the waits before each further attempt at a
// COMPLETED write that failed for a reason that may pass (throttling, a
// server error, a broken connection). The store's client has retried
// already (the AWS SDK makes three attempts within about a second), but a
// success whose record is never written is the one case where the effect
// runs again once the lease ends: a few more attempts, spread over two
// seconds, are cheap next to that.
var completeRetryDelays = [...]time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second}

// completeRetryMargin is the least time the lease must have left after a
// wait for one more attempt to be made: the response must still reach
// Lambda before the invocation's deadline, or the caller sees a timeout and
// retries anyway.
const completeRetryMargin = 500 * time.Millisecond

// completeAgain makes further attempts at the COMPLETED write of rec after
// the first failed with err, while the failure is one that may pass and the
// lease, which ends at leaseEnd, leaves time. A retry is safe whatever
// became of the earlier attempts: the write is conditioned on the lease
// token, and rewriting a record COMPLETED with the same token succeeds (the
// Store contract). It returns nil once an attempt succeeds, else the last
// error.
//
// The lease ends at the invocation's deadline, a time of the real clock,
// so the time left is measured on that clock.
func (e *engine) completeAgain(ctx context.Context, rec *Record, leaseEnd time.Time, err error) error {
	for _, wait := range completeRetryDelays {
		if !mayPass(err) || time.Until(leaseEnd) < wait+completeRetryMargin {
			return err
		}
		e.log().WarnContext(ctx, "idempotency: could not store the response; trying again", "key", rec.Key, "wait", wait, "error", err)
		timer := time.NewTimer(wait)
		<-timer.C
		if err = e.store.Complete(ctx, rec); err == nil {
			return nil
		}
	}
	return err
}

// mayPass reports whether another attempt at a COMPLETED write could
// succeed after err. The typed outcomes are final: the lease is lost, the
// record is too large, a commit of staged writes was refused or its outcome
// is unknown (each has its own handling in complete).
func mayPass(err error) bool {
	_, commit := errors.AsType[*CommitError](err)
	_, corrupted := errors.AsType[*CorruptedRecordError](err)
	return !commit && !corrupted && !errors.Is(err, ErrLeaseLost) && !errors.Is(err, ErrRecordTooLarge)
}
