package idempotency

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gopowertools/lambda/internal/simclock"
)

// This file is what happens to an invocation whose key another holds: a
// COMPLETED record is replayed; an INPROGRESS one fails the duplicate at
// once or makes it wait (WithWaitForInProgress), unless the holder has
// ended without completing, which WithAbandonPolicy settles; an UNCERTAIN
// one waits for WithReconcile's function or an operator.
// docs/in-progress.md draws each case.

// duplicate answers an invocation whose key is held by the live record
// existing. A payload conflict is reported first, whatever the record's
// state: a different request reusing a key is a client bug worth
// surfacing even while the first request is still running. again reports
// that the key may be free now (see inProgress).
func (e *engine) duplicate(ctx context.Context, existing *Record, hash string, payload []byte, fn call, now time.Time) (res result, err error, again bool) {
	key := existing.Key
	switch existing.Status {
	case StatusComplete:
		e.cache.put(existing)
		res, err = e.replay(ctx, existing, hash, payload)
		return res, err, false
	case StatusUncertain:
		res, err = e.resolve(ctx, existing, hash, payload, fn, now)
		return res, err, false
	case StatusInProgress:
		if err := e.checkPayload(key, existing, hash, payload); err != nil {
			return result{key: key, outcome: OutcomeConflict}, err, false
		}
		return e.inProgress(ctx, existing, hash, payload, fn, now)
	}
	return result{key: key, outcome: OutcomeStoreError}, &CorruptedRecordError{Key: key, Reason: fmt.Sprintf("unknown status %q", existing.Status)}, false
}

// replay returns the response stored in rec, a COMPLETED record, after
// checking the payload. An error of the replay hook is a replay's.
func (e *engine) replay(ctx context.Context, rec *Record, hash string, payload []byte) (result, error) {
	res := result{key: rec.Key, outcome: OutcomeReplayed, completedAt: rec.CompletedAt}
	if err := e.checkPayload(rec.Key, rec, hash, payload); err != nil {
		return result{key: rec.Key, outcome: OutcomeConflict}, err
	}
	if rec.ResponseOmitted {
		res.outcome = OutcomeNotStored
		return res, &ResponseNotStoredError{Key: rec.Key, Reason: rec.ResponseOmittedReason}
	}
	if e.replayHook == nil {
		res.response = rec.Response
		return res, nil
	}
	var err error
	res.response, err = e.replayHook(ctx, rec)
	return res, err
}

// replayFunc is a replay hook on encoded responses: it returns the response
// a replay of rec returns.
type replayFunc func(ctx context.Context, rec *Record) ([]byte, error)

// checkPayload compares the stored payload hash with the hash of payload,
// the event's. A COMPLETED or UNCERTAIN record stored before validation
// was turned on has no hash and conflicts: the middleware cannot tell
// that it was the same request, and will not replay its response, or
// settle its outcome, for another. An INPROGRESS one without a hash does
// not: a duplicate gets nothing from it but an *InProgressError, and
// meets the record it becomes on a retry. One stored under an adapter's
// former default validation matches by that expression's hash.
func (e *engine) checkPayload(key string, rec *Record, hash string, payload []byte) error {
	if e.validation == nil || rec.PayloadHash == hash || (rec.Status == StatusInProgress && rec.PayloadHash == "") {
		return nil
	}
	if e.formerMatch(rec, payload) {
		return nil
	}
	return &PayloadConflictError{Key: key, StoredHash: rec.PayloadHash, EventHash: hash}
}

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

// holdUntil sets the lease of rec, a new INPROGRESS record of an
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

// holderEnd is when the invocation holding the INPROGRESS record rec is
// expected to end: its deadline when the record keeps one, else its
// lease end.
func holderEnd(rec *Record) time.Time {
	if !rec.Deadline.IsZero() {
		return rec.Deadline
	}
	return rec.LeaseEnd
}

// abandoned reports whether the INPROGRESS record rec, live at now, is
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
// INPROGRESS record, after the payload check. again reports that the key
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
		if err := e.checkPayload(key, next, hash, payload); err != nil {
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

// abandoned answers a duplicate of rec, an INPROGRESS record whose
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

// reconcileFunc is a reconcile function on encoded responses.
type reconcileFunc func(ctx context.Context, key string) (resp []byte, happened bool, err error)

// resolve answers a duplicate of the UNCERTAIN record existing.
func (e *engine) resolve(ctx context.Context, existing *Record, hash string, payload []byte, fn call, now time.Time) (result, error) {
	key := existing.Key
	if err := e.checkPayload(key, existing, hash, payload); err != nil {
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

// sleep waits d, or until ctx is done, when it returns ctx.Err().
func sleep(ctx context.Context, d time.Duration) error {
	if c := simclock.From(ctx); c != nil {
		return c.Sleep(ctx, d)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// until returns the time left until t, a time of the clock that set the
// context's deadline.
func until(ctx context.Context, t time.Time) time.Duration {
	if c := simclock.From(ctx); c != nil {
		return c.Until(t)
	}
	return time.Until(t)
}

// jitter returns d give or take a quarter.
func jitter(ctx context.Context, d time.Duration) time.Duration {
	if c := simclock.From(ctx); c != nil {
		return d*3/4 + c.N(d/2+1)
	}
	return d*3/4 + rand.N(d/2+1)
}
