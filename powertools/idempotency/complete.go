package idempotency

import (
	"context"
	"errors"
	"time"
)

// This is how an invocation that held the key leaves it: the record
// COMPLETED with the response, retried while the lease leaves time;
// released for a retry after the handler failed; or UNCERTAIN when the
// handler cannot tell whether its effect happened.

// writeContext is the context for the writes after the handler: they are
// made even when the invocation's context is done, because the effect has
// happened, and a record of it is worth more than promptness. That holds
// for a context still live too: its deadline can pass while the write is
// on its way, and a cancelled COMPLETED write leaves the key to the next
// duplicate.
func (inv *invocation) writeContext() context.Context {
	return context.WithoutCancel(inv.ctx)
}

// complete stores resp as the key's response, or no response when omitted
// (a success whose result could not be encoded). Once the handler has
// succeeded, a failure to store its response is logged, not returned: the
// caller would retry, and rerun an effect that has already happened. The
// exception is a store that commits the handler's staged writes with the
// record ([Invoker]): when it reports that they were not committed, or
// that it cannot tell (a [*CommitError]), the effect did not happen, or
// may not have, and saying it did would be a lie. The outcome is the
// invocation's, or "" where the error says it.
func (inv *invocation) complete(resp []byte, omitted bool) (Outcome, error) {
	ctx, rec := inv.writeContext(), &inv.lease.rec
	now := inv.clock()
	*rec = Record{
		Key:             rec.Key,
		Status:          StatusComplete,
		Expiry:          now.Add(inv.expiresAfter),
		LeaseToken:      rec.LeaseToken,
		Response:        resp,
		ResponseOmitted: omitted,
		PayloadHash:     rec.PayloadHash,
		CompletedAt:     now,
	}
	if omitted {
		rec.ResponseOmittedReason = ReasonNotEncoded
	}
	err := inv.store.Complete(ctx, rec)
	if errors.Is(err, ErrUnstorableResponse) {
		// The store says why: the item limit, or a wrapper's offload or
		// encryption that failed (responsestore's *ResponseError).
		why := err
		rec.Response, rec.ResponseOmitted, rec.ResponseOmittedReason = nil, true, notStoredReason(err)
		if err = inv.store.Complete(ctx, rec); err == nil {
			inv.log().WarnContext(ctx, "idempotency: the response could not be stored; duplicates get ResponseNotStoredError", "key", rec.Key, "size", len(resp), "reason", rec.ResponseOmittedReason, "error", why)
		}
	}
	if err != nil {
		err = inv.retryComplete(err)
	}
	if err == nil {
		inv.cache.put(rec)
		return OutcomeNew, nil
	}
	if commit, ok := errors.AsType[*CommitError](err); ok {
		return inv.notCommitted(commit)
	}
	if errors.Is(err, ErrLeaseLost) {
		inv.log().ErrorContext(ctx, "idempotency: the lease was lost before the handler finished; another invocation took the key, so the effect may have run twice", "key", rec.Key)
		return OutcomeLeaseLost, nil
	}
	inv.log().ErrorContext(ctx, "idempotency: could not store the response; duplicates get InProgressError until the lease ends, then run again", "key", rec.Key, "error", err)
	return OutcomeNew, nil
}

// notStoredReason is why the store refused a response, err matching
// [ErrUnstorableResponse]: its NotStoredReason, else [ReasonTooLarge]
// for a record too large, else reasonRefused.
func notStoredReason(err error) string {
	if r, ok := errors.AsType[interface {
		error
		NotStoredReason() string
	}](err); ok {
		return r.NotStoredReason()
	}
	if errors.Is(err, ErrRecordTooLarge) {
		return ReasonTooLarge
	}
	return reasonRefused
}

// reasonRefused is the reason a record keeps for a response that the
// store refused without saying why.
const reasonRefused = "refused by the store"

// notCommitted ends an invocation whose staged writes and COMPLETED record
// the store did not commit, or cannot tell whether it did.
func (inv *invocation) notCommitted(commit *CommitError) (Outcome, error) {
	ctx := inv.writeContext()
	switch commit.State {
	case CommitRefused:
		// The handler's own writes were refused: the handler failed, so
		// the key is released for a retry, as after any handler error.
		inv.release()
		return OutcomeReleased, commit.Err
	case CommitLeaseLost:
		inv.log().ErrorContext(ctx, "idempotency: the lease was lost before the commit: NOTHING WAS COMMITTED, neither the handler's staged writes nor its response; another invocation holds the key", "key", inv.key, "error", commit)
		return OutcomeLeaseLost, &PersistenceError{Op: "complete", Key: inv.key, Err: commit}
	default:
		inv.log().ErrorContext(ctx, "idempotency: unknown whether the handler's staged writes were committed; the record is kept: COMPLETED if they were, else it runs again once the lease ends", "key", inv.key, "error", commit)
	}
	return "", &PersistenceError{Op: "complete", Key: inv.key, Err: commit}
}

// release deletes the INPROGRESS record so that a retry can run the
// handler. If that fails the lease still ends on its own.
func (inv *invocation) release() {
	rec := &inv.lease.rec
	if err := inv.store.Release(inv.writeContext(), rec.Key, rec.LeaseToken); err != nil {
		inv.log().ErrorContext(inv.ctx, "idempotency: could not release the key; it stays blocked until the lease ends", "key", rec.Key, "lease_end", inv.lease.end, "error", err)
	}
}

// markUncertain keeps the key of a handler whose outcome is uncertain: the
// record becomes UNCERTAIN, with its lease token and no lease, until it
// expires or is reconciled. The handler's staged writes, if any, are not
// committed: the store commits them only with a COMPLETED record.
func (inv *invocation) markUncertain() {
	rec := &inv.lease.rec
	*rec = Record{
		Key:         rec.Key,
		Status:      StatusUncertain,
		Expiry:      inv.clock().Add(inv.expiresAfter),
		LeaseToken:  rec.LeaseToken,
		PayloadHash: rec.PayloadHash,
	}
	if err := inv.store.MarkUncertain(inv.writeContext(), rec); err != nil {
		inv.log().ErrorContext(inv.ctx, "idempotency: could not mark the outcome UNCERTAIN; the key stays INPROGRESS until the lease ends, and the handler RUNS AGAIN after it", "key", rec.Key, "lease_end", inv.lease.end, "error", err)
	}
}

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

// retryComplete makes further attempts at the COMPLETED write of the
// lease's record after the first failed with err, while the failure is
// one that may pass and the lease leaves time. A retry is safe whatever
// became of the earlier attempts: the write is conditioned on the lease
// token, and rewriting a record COMPLETED with the same token succeeds
// (the Store contract). It returns nil once an attempt succeeds, else the
// last error.
//
// The lease ends at the invocation's deadline, a time of the real clock,
// so the time left is measured on that clock.
func (inv *invocation) retryComplete(err error) error {
	ctx, rec := inv.writeContext(), &inv.lease.rec
	for _, wait := range completeRetryDelays {
		if !retryable(err) || until(ctx, inv.lease.end) < wait+completeRetryMargin {
			return err
		}
		inv.log().WarnContext(ctx, "idempotency: could not store the response; trying again", "key", rec.Key, "wait", wait, "error", err)
		sleep(ctx, wait) // a write context: never done
		if err = inv.store.Complete(ctx, rec); err == nil {
			return nil
		}
	}
	return err
}

// retryable reports whether another attempt at a COMPLETED write could
// succeed after err. The typed outcomes are final: the lease is lost, the
// response cannot be stored, a commit of staged writes was refused or its outcome
// is unknown (each has its own handling in complete).
func retryable(err error) bool {
	_, commit := errors.AsType[*CommitError](err)
	_, corrupted := errors.AsType[*CorruptedRecordError](err)
	return !commit && !corrupted && !errors.Is(err, ErrLeaseLost) && !errors.Is(err, ErrUnstorableResponse)
}
