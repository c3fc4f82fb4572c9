package idempotency

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// This is what happens to an invocation whose key another holds: a
// COMPLETED record is replayed; an INPROGRESS one fails the duplicate at
// once or makes it wait (WithWaitForInProgress), unless the holder has
// ended without completing, which WithAbandonPolicy settles; an UNCERTAIN
// one waits for WithReconcile's function or an operator.
// docs/in-progress.md draws each case.

// duplicate answers an invocation whose key is held by the live record
// rec. A payload conflict is reported first, whatever the record's state:
// a different request reusing a key is a client bug worth surfacing even
// while the first request is still running. reacquire reports that the
// key may be free now: the caller tries to take it.
func (inv *invocation) duplicate(rec *Record) (res result, err error, reacquire bool) {
	for {
		switch rec.Status {
		case StatusComplete:
			inv.cache.put(rec)
			res, err = inv.replay(rec)
			return res, err, false
		case StatusUncertain:
			res, err = inv.reconcile(rec)
			return res, err, false
		case StatusInProgress:
		default:
			return result{key: inv.key}, &CorruptedRecordError{Key: inv.key, Reason: fmt.Sprintf("unknown status %q", rec.Status)}, false
		}
		if err := inv.checkPayload(rec); err != nil {
			return result{key: inv.key}, err, false
		}
		if holderGone(rec, inv.now) {
			return inv.abandon(rec)
		}
		next, err := inv.waitForHolder(rec)
		switch {
		case err != nil:
			return result{key: inv.key}, err, false
		case next == nil:
			return result{}, nil, true
		}
		rec = next
	}
}

// replay returns the response stored in rec, a COMPLETED record, after
// checking the payload. An error of the replay hook is a replay's.
func (inv *invocation) replay(rec *Record) (result, error) {
	if err := inv.checkPayload(rec); err != nil {
		return result{key: rec.Key}, err
	}
	if rec.ResponseOmitted {
		return result{key: rec.Key}, &ResponseNotStoredError{Key: rec.Key, Reason: rec.ResponseOmittedReason}
	}
	res := result{key: rec.Key, outcome: OutcomeReplayed, completedAt: rec.CompletedAt}
	if inv.replayHook == nil {
		if err := storedJSON(rec.Key, rec.Response); err != nil {
			return result{key: rec.Key}, err
		}
		res.response = rec.Response
		return res, nil
	}
	var err error
	res.response, err = inv.replayHook(inv.ctx, rec)
	return res, err
}

// replayFunc is a replay hook on encoded responses: it returns the response
// a replay of rec returns.
type replayFunc func(ctx context.Context, rec *Record) ([]byte, error)

// checkPayload compares the payload hash that rec stores with the
// invocation's. A COMPLETED or UNCERTAIN record stored before validation
// was turned on has no hash and conflicts: the middleware cannot tell
// that it was the same request, and will not replay its response, or
// settle its outcome, for another. An INPROGRESS one without a hash does
// not: a duplicate gets nothing from it but an *InProgressError, and
// meets the record it becomes on a retry. One stored under an adapter's
// former default validation matches by that expression's hash.
func (inv *invocation) checkPayload(rec *Record) error {
	if inv.validation == nil || rec.PayloadHash == inv.hash || (rec.Status == StatusInProgress && rec.PayloadHash == "") {
		return nil
	}
	if inv.formerMatch(rec, inv.payload) {
		return nil
	}
	return &PayloadConflictError{Key: rec.Key, StoredHash: rec.PayloadHash, EventHash: inv.hash}
}

// Waiting: the first read after waitFirst, then each wait twice as long,
// give or take a quarter; never past the duplicate's deadline less
// waitMargin, so that its answer reaches the caller in time.
// (Variables, so that tests can shorten them.)
var (
	waitFirst  = 50 * time.Millisecond
	waitMargin = time.Second
)

// waitForHolder waits, under WithWaitForInProgress, until rec, a live
// INPROGRESS record of the invocation's payload, changes, and returns
// what holds the key then for the caller to answer: a record of another
// status or payload, or one whose holder has gone (holderGone); nil when
// the key may be free (the record was released, or its lease ended).
// Without the option, or once the wait is over, or when the record cannot
// be read, it returns an *InProgressError.
func (inv *invocation) waitForHolder(rec *Record) (*Record, error) {
	inProgress := &InProgressError{Key: inv.key, LeaseEnd: holderDeadline(rec)}
	var waitEnd time.Time
	if inv.wait {
		waitEnd = inv.waitUntil()
	}
	for delay := waitFirst; ; delay *= 2 {
		// Drawn before the option is looked at, as it always was: the
		// simulator's seeded schedules depend on the order of the draws.
		wait := jitter(inv.ctx, delay)
		if !inv.wait || inv.now.Add(wait).After(waitEnd) || sleep(inv.ctx, wait) != nil {
			return nil, inProgress
		}
		next, err := inv.store.Get(inv.ctx, inv.key)
		inv.now = inv.clock()
		switch {
		case errors.Is(err, ErrRecordNotFound):
			return nil, nil // released, or expired and deleted
		case err != nil:
			inv.log().WarnContext(inv.ctx, "idempotency: could not read the record while waiting for it", "key", inv.key, "error", err)
			return nil, inProgress
		case !next.Live(inv.now):
			return nil, nil // the holder's lease ended: take the key
		case next.Status != StatusInProgress || holderGone(next, inv.now) || inv.checkPayload(next) != nil:
			return next, nil
		}
		// Still running, or held by another invocation of the same
		// request since.
		inProgress.LeaseEnd = holderDeadline(next)
	}
}

// waitUntil is the latest time a duplicate that begins waiting now may
// wait until.
func (inv *invocation) waitUntil() time.Time {
	if d, ok := inv.ctx.Deadline(); ok {
		// The deadline is on the real clock; the wait is measured on the
		// wrapper's.
		return inv.now.Add(until(inv.ctx, d) - waitMargin)
	}
	return inv.now.Add(inv.leaseWithoutDeadline)
}
