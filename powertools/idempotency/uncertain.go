package idempotency

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// AbandonPolicy is what becomes of a key whose invocation ended without
// completing or releasing it: it timed out, crashed or ran out of memory,
// perhaps in the middle of its effect.
type AbandonPolicy int

const (
	// AbandonRetry: once the invocation's lease ends (its deadline), the
	// next duplicate takes the key over and runs the handler again. Right
	// for effects that are safe to repeat, or that the downstream makes
	// idempotent with the key (see [KeyFromContext]).
	AbandonRetry AbandonPolicy = iota
	// AbandonBlock: the key stays locked until the record expires
	// ([WithExpiresAfter]); duplicates get an [*AbandonedError]. Right for
	// an effect that must not run twice and that nobody can check: an
	// operator decides (see docs/operations.md), or the record expires.
	AbandonBlock
	// AbandonUncertain: the next duplicate past the invocation's deadline
	// marks the record UNCERTAIN, as if the handler had returned an
	// [Uncertain] error, and [WithReconcile]'s function decides: it asks
	// the downstream, by the key, whether the effect happened. Without
	// one, the record waits for an operator, and duplicates get an
	// [*UncertainError].
	AbandonUncertain
)

// String returns the policy's name, as POWERTOOLS_IDEMPOTENCY_ABANDON_POLICY
// spells it: retry, block or uncertain.
func (p AbandonPolicy) String() string {
	switch p {
	case AbandonRetry:
		return "retry"
	case AbandonBlock:
		return "block"
	case AbandonUncertain:
		return "uncertain"
	}
	return fmt.Sprintf("AbandonPolicy(%d)", int(p))
}

// AbandonGrace is how long after an invocation's deadline its INPROGRESS
// record is taken for abandoned under [AbandonBlock] and
// [AbandonUncertain].
const AbandonGrace = 5 * time.Second

// abandon answers a duplicate of rec, an INPROGRESS record whose
// invocation has ended without completing, under AbandonBlock or
// AbandonUncertain. reacquire reports that rec changed before it could be
// marked UNCERTAIN: the caller looks at the key anew.
func (inv *invocation) abandon(rec *Record) (res result, err error, reacquire bool) {
	if inv.engine.abandon != AbandonUncertain {
		// AbandonBlock, and AbandonRetry meeting a record of a function
		// with another policy: what that function chose holds.
		return result{key: inv.key}, &AbandonedError{Key: inv.key, Deadline: rec.Deadline, Expiry: rec.Expiry}, false
	}
	// Marked UNCERTAIN under the abandoned invocation's token, so that
	// the write fails if that record has changed since it was read.
	marked := &Record{Key: inv.key, Status: StatusUncertain, Expiry: rec.Expiry, LeaseToken: rec.LeaseToken, PayloadHash: rec.PayloadHash}
	if err := inv.store.MarkUncertain(inv.writeContext(), marked); err != nil {
		if errors.Is(err, ErrLeaseLost) {
			return result{}, nil, true
		}
		return result{key: inv.key}, storeError("abandon", inv.key, err), false
	}
	inv.log().WarnContext(inv.ctx, "idempotency: the invocation holding the key ended without completing; its record is now UNCERTAIN", "key", inv.key, "deadline", rec.Deadline)
	res, err = inv.reconcile(marked)
	return res, err, false
}

// reconcileFunc is a reconcile function on encoded responses.
type reconcileFunc func(ctx context.Context, key string) (resp []byte, happened bool, err error)

// reconcile answers a duplicate of the UNCERTAIN record rec: with
// WithReconcile's function, once no other invocation is reconciling it,
// the reconciled response, or the handler's when the effect did not
// happen; else an *UncertainError.
func (inv *invocation) reconcile(rec *Record) (result, error) {
	if err := inv.checkPayload(rec); err != nil {
		return result{key: inv.key}, err
	}
	if inv.reconciler == nil {
		return result{key: inv.key}, &UncertainError{Key: inv.key}
	}
	if inv.now.Before(rec.LeaseEnd) {
		return result{key: inv.key}, &UncertainError{Key: inv.key, LeaseEnd: rec.LeaseEnd}
	}
	inv.lease = lease{rec: Record{
		Key:         inv.key,
		Status:      StatusUncertain,
		Expiry:      inv.now.Add(inv.expiresAfter),
		LeaseToken:  newLeaseToken(),
		PayloadHash: rec.PayloadHash,
	}}
	inv.lease.end = inv.leaseEnd()
	inv.lease.rec.LeaseEnd = inv.lease.end
	if err := inv.store.Reclaim(inv.ctx, &inv.lease.rec, rec.LeaseToken); err != nil {
		if errors.Is(err, ErrLeaseLost) {
			// Another invocation reclaimed it first and is reconciling.
			return result{key: inv.key}, &UncertainError{Key: inv.key}
		}
		return result{key: inv.key}, storeError("reclaim", inv.key, err)
	}
	resp, happened, err := inv.reconciler(withKey(inv.ctx, inv.key), inv.key)
	switch {
	case err != nil:
		inv.markUncertain()
		return result{key: inv.key}, &UncertainError{Key: inv.key, Err: err}
	case happened:
		// The effect happened: the reconciled result is stored and
		// returned as a replay would be.
		outcome, err := inv.complete(resp, false)
		if err != nil {
			return result{key: inv.key, outcome: outcome}, err
		}
		return result{response: resp, key: inv.key, outcome: OutcomeReplayed, completedAt: inv.lease.rec.CompletedAt}, nil
	}
	return inv.runHandler()
}
