package idempotency

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// This file is what happens when an invocation meets a key that another
// holds IN_PROGRESS: it fails at once or waits for the other to finish
// (WithWaitForInProgress), and what becomes of a key whose invocation
// ended without completing or releasing it (WithAbandonPolicy).
// docs/in-progress.md draws each case.

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

// WithAbandonPolicy sets what becomes of a key whose invocation ended
// without completing or releasing it: see [AbandonPolicy].
//
// Under [AbandonBlock] and [AbandonUncertain] the IN_PROGRESS record's
// lease lasts until it expires, so that no store hands the key over, and
// the record keeps the invocation's deadline ([Record.Deadline]) to tell a
// holder that is running from one that is gone. A record is taken for
// abandoned [AbandonGrace] after that deadline: Lambda has stopped the
// invocation by then, and a write it sent just before has landed.
//
// Default: POWERTOOLS_IDEMPOTENCY_ABANDON_POLICY (retry, block or
// uncertain), else [AbandonRetry].
func WithAbandonPolicy(p AbandonPolicy) Option {
	return func(o *options) { o.abandon = p; o.set("WithAbandonPolicy") }
}

// AbandonGrace is how long after an invocation's deadline its IN_PROGRESS
// record is taken for abandoned under [AbandonBlock] and
// [AbandonUncertain].
const AbandonGrace = 5 * time.Second

// WithWaitForInProgress makes a duplicate that meets a live IN_PROGRESS
// record wait for it instead of failing at once with an
// [*InProgressError]: it reads the record again, with a consistent read,
// after 50 ms, then after twice as long each time (give or take a quarter,
// so that duplicates spread out), so a wait of N seconds makes about
// log2(20N) reads. When the first invocation completes, the duplicate
// returns its stored response; when it fails (its record released) or its
// lease ends, the duplicate takes the key and runs the handler itself.
// The wait never goes past the duplicate's own deadline less a second
// (without a deadline, the [WithLease] duration): then it returns the
// [*InProgressError], with the holder's lease end.
//
// An API client that retries a slow request gets its response instead of
// an error, and an SQS duplicate in the same batch is not sent back to the
// queue. The wait costs the duplicate's running time: keep it off for
// functions whose duplicates come long after the first.
//
// Default: POWERTOOLS_IDEMPOTENCY_WAIT_FOR_IN_PROGRESS (a boolean), else
// false.
func WithWaitForInProgress(wait bool) Option {
	return func(o *options) { o.wait = wait; o.set("WithWaitForInProgress") }
}

// WithLeaseBeyondDeadline makes an invocation's lease last d past its
// deadline, for a handler that hands its effect to something that can
// finish after the invocation has ended: a duplicate meanwhile gets an
// [*InProgressError] (or waits) instead of running the effect again. The
// price: a key whose invocation crashed stays blocked d longer, and under
// [AbandonBlock] and [AbandonUncertain] the invocation counts as abandoned
// only [AbandonGrace] after its deadline plus d. It must not be negative.
//
// Default: POWERTOOLS_IDEMPOTENCY_LEASE_BEYOND_DEADLINE (a Go duration),
// else 0.
func WithLeaseBeyondDeadline(d time.Duration) Option {
	return func(o *options) { o.leaseBeyond = d; o.set("WithLeaseBeyondDeadline") }
}

// AbandonedError is returned, under [AbandonBlock], to a duplicate of a
// key whose invocation ended at Deadline without completing or releasing
// it: its effect may have happened, so the key stays locked until Expiry,
// or until an operator deletes the record. The handler is not run.
type AbandonedError struct {
	Key      string
	Deadline time.Time
	Expiry   time.Time
}

func (e *AbandonedError) Error() string {
	return fmt.Sprintf("idempotency: the invocation holding key %q ended at %s without completing; the key is locked until %s",
		e.Key, e.Deadline.UTC().Format(time.RFC3339Nano), e.Expiry.UTC().Format(time.RFC3339Nano))
}

// holdUntil sets the lease of rec, a new IN_PROGRESS record of an
// invocation whose deadline is deadline: under AbandonRetry the lease ends
// then, else it lasts until the record expires and the record keeps the
// deadline.
func (e *engine) holdUntil(rec *Record, deadline time.Time) {
	if e.abandon == AbandonRetry {
		rec.LeaseEnd, rec.Deadline = deadline, time.Time{}
		return
	}
	rec.LeaseEnd, rec.Deadline = rec.Expiry, deadline
}

// holderEnd is when the invocation holding the IN_PROGRESS record rec is
// expected to end: its deadline when the record keeps one, else its
// lease end.
func holderEnd(rec *Record) time.Time {
	if !rec.Deadline.IsZero() {
		return rec.Deadline
	}
	return rec.LeaseEnd
}

// abandoned reports whether the IN_PROGRESS record rec, live at now, is
// held by an invocation that has ended.
func abandoned(rec *Record, now time.Time) bool {
	return !rec.Deadline.IsZero() && !now.Before(rec.Deadline.Add(AbandonGrace))
}

// Waiting: the first read after waitFirst, then each wait twice as long,
// give or take a quarter; never past the duplicate's deadline less
// waitMargin, so that its answer reaches the caller in time.
// (Variables, so that tests can shorten them.)
var (
	waitFirst  = 50 * time.Millisecond
	waitMargin = time.Second
)

// inProgress answers a duplicate whose key is held by rec, a live
// IN_PROGRESS record, after the payload check. again reports that the key
// may be free now (the record was released, or its lease ended while the
// duplicate waited): the caller tries to acquire it.
func (e *engine) inProgress(ctx context.Context, rec *Record, hash string, payload []byte, fn call, now time.Time) (res result, err error, again bool) {
	key := rec.Key
	delay := waitFirst
	var waitEnd time.Time
	if e.wait {
		waitEnd = e.waitUntil(ctx, now)
	}
	for {
		if abandoned(rec, now) {
			return e.abandoned(ctx, rec, hash, payload, fn, now)
		}
		wait := jitter(ctx, delay)
		if !e.wait || now.Add(wait).After(waitEnd) {
			return result{key: key, outcome: OutcomeInProgress}, &InProgressError{Key: key, LeaseEnd: holderEnd(rec)}, false
		}
		if sleep(ctx, wait) != nil {
			return result{key: key, outcome: OutcomeInProgress}, &InProgressError{Key: key, LeaseEnd: holderEnd(rec)}, false
		}
		delay *= 2
		next, err := e.store.Get(ctx, key)
		now = e.now()
		switch {
		case errors.Is(err, ErrRecordNotFound):
			return result{}, nil, true // released, or expired and deleted
		case err != nil:
			e.log().WarnContext(ctx, "idempotency: could not read the record while waiting for it", "key", key, "error", err)
			return result{key: key, outcome: OutcomeInProgress}, &InProgressError{Key: key, LeaseEnd: holderEnd(rec)}, false
		case !next.Live(now):
			return result{}, nil, true // the holder's lease ended: take the key
		case next.Status != StatusInProgress:
			return e.duplicate(ctx, next, hash, payload, fn, now)
		}
		if err := e.checkPayload(key, next, hash); err != nil {
			// Taken over since by a request with another payload.
			return result{key: key, outcome: OutcomeConflict}, err, false
		}
		rec = next // still running, or held by another invocation since
	}
}

// waitUntil is the latest time a duplicate that began waiting at now may
// wait until.
func (e *engine) waitUntil(ctx context.Context, now time.Time) time.Time {
	if d, ok := ctx.Deadline(); ok {
		// The deadline is on the real clock; the wait is measured on the
		// wrapper's.
		return now.Add(until(ctx, d) - waitMargin)
	}
	return now.Add(e.lease)
}

// abandoned answers a duplicate of rec, an IN_PROGRESS record whose
// invocation has ended without completing, under AbandonBlock or
// AbandonUncertain. again reports that rec changed before it could be
// marked UNCERTAIN: the caller looks at the key anew.
func (e *engine) abandoned(ctx context.Context, rec *Record, hash string, payload []byte, fn call, now time.Time) (res result, err error, again bool) {
	key := rec.Key
	if e.abandon != AbandonUncertain {
		// AbandonBlock, and AbandonRetry meeting a record of a function
		// with another policy: what that function chose holds.
		return result{key: key, outcome: OutcomeAbandoned}, &AbandonedError{Key: key, Deadline: rec.Deadline, Expiry: rec.Expiry}, false
	}
	// Marked UNCERTAIN under the abandoned invocation's token, so that
	// the write fails if that record has changed since it was read.
	held := &Record{Key: key, Status: StatusUncertain, Expiry: rec.Expiry, LeaseToken: rec.LeaseToken, PayloadHash: rec.PayloadHash}
	if err := e.store.Complete(writeContext(ctx), held); err != nil {
		if errors.Is(err, ErrLeaseLost) {
			return result{}, nil, true
		}
		return result{key: key, outcome: OutcomeStoreError}, storeError("abandon", key, err), false
	}
	e.log().WarnContext(ctx, "idempotency: the invocation holding the key ended without completing; its record is now UNCERTAIN", "key", key, "deadline", rec.Deadline)
	res, err = e.resolve(ctx, held, hash, payload, fn, now)
	return res, err, false
}
