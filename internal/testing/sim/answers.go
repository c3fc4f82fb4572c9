package sim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file checks what each invocation tells its caller against what
// happened: the invariants on responses (I2, I3) and on reported
// outcomes (I5).

// returned is told what inv returned to its caller.
func (c *checker) returned(inv *invocation, outcome idempotency.Outcome, resp []byte, err error) {
	key := inv.key
	now := c.w.s.now
	if err != nil {
		c.returnedError(inv, key, outcome, err)
		return
	}
	r, ok := parseReceipt(resp)
	if !ok {
		invariant := invOutcome
		if outcome == idempotency.OutcomeReplayed {
			invariant = invReplay
		}
		c.violate(invariant, noExcuse, key, "%v returned a response (%s) that is not a receipt: %.200q", inv.id, outcome, resp)
		return
	}
	if c.w.cfg.validation && (r.Amount != inv.amount || r.OrderID != fmt.Sprintf("o%d", inv.req.order)) {
		ex := noExcuse
		if c.misreconciled[r.Effect] != "" {
			// Stored since as the key's response: every replay carries it.
			ex = excuse{limitReconcileLives, c.misreconciled[r.Effect]}
		}
		c.violate(invPayload, ex, key, "%v (order o%d, amount %d) got the response of effect %d, made for %s amount %d",
			inv.id, inv.req.order, inv.amount, r.Effect, r.OrderID, r.Amount)
	}
	ran := outcome == idempotency.OutcomeNew || outcome == idempotency.OutcomeLeaseLost
	if ran && !bytes.Equal(resp, inv.produced) {
		c.violate(invOutcome, noExcuse, key, "%v returned %.80q, not the %.80q its handler produced", inv.id, resp, inv.produced)
	}
	if ran && c.w.cfg.invoker && !contains(inv.effects, r.Effect) {
		c.violate(invOutcome, noExcuse, key, "%v returned effect %d as done, but it was never committed", inv.id, r.Effect)
	}
	ks := c.key(key)
	cur := ks.complete
	if cur != nil && outcome == idempotency.OutcomeReplayed && bytes.Equal(cur.response, resp) {
		cur.replayed = true
	}
	if outcome == idempotency.OutcomeReplayed && inv.reconciled == 0 {
		c.replayedLive(inv, key, resp)
	}
	if cur == nil || cur.omitted || !now.Before(cur.expiryLo.Add(-c.tol())) || bytes.Equal(cur.response, resp) {
		return
	}
	if prev := ks.previous; prev != nil && bytes.Equal(prev.response, resp) &&
		(now.Before(prev.expiry.Add(c.tol()+time.Second)) || inv.judgedAt.Before(prev.expiry.Add(c.tol()))) {
		// A replay of the record just expired, as its reader's clock
		// allows, or read while it was live and answered late.
		return
	}
	if ran && !contains(c.tokensOf(inv), cur.token) {
		// The handler ran while another's COMPLETED record was live: I1
		// reports the effect; here the caller got its own result.
		c.violate(invReplay, cmp.Or(cur.lostBy, inv.limit), key, "%v ran (effect %d) and returned its own response while token %s's was stored", inv.id, r.Effect, c.name(cur.token))
		return
	}
	c.violate(invReplay, cur.lostBy, key, "%v got %.80q, not the %.80q that the key's holder (token %s) completed (stored until %s)",
		inv.id, resp, cur.response, c.name(cur.token), c.w.at(cur.expiry))
}

// reconciledOther is told that inv's reconcile function found effect n,
// made for another payload (amount) than inv's: what it stores is then
// the documented limit's, caused by the requests that share the key.
func (c *checker) reconciledOther(inv *invocation, n, amount int) {
	if amount != inv.amount {
		c.misreconciled[n] = c.w.keyReused(inv.req.order)
	}
}

// replayedLive judges a replay by the record it replays: it must have
// been read before that record expired, by the reader's clock (a local
// cache checks expiry when it is read).
func (c *checker) replayedLive(inv *invocation, key string, resp []byte) {
	ks := c.key(key)
	for i := len(ks.completions) - 1; i >= 0; i-- {
		cp := ks.completions[i]
		if !bytes.Equal(cp.response, resp) {
			continue
		}
		if judged := clockOf(inv, inv.judgedAt); !judged.Before(cp.expiryHi.Add(c.tol())) {
			c.violate(invReplay, cp.lostBy, key, "%v replayed the response of token %s on a clock read at %s, after that record expired (by %s at the latest)",
				inv.id, c.name(cp.token), c.w.at(judged), c.w.at(cp.expiryHi))
		}
		return
	}
}

func (c *checker) returnedError(inv *invocation, key string, outcome idempotency.Outcome, err error) {
	if e, ok := errors.AsType[*idempotency.InProgressError](err); ok {
		c.inProgress(inv, key, e.LeaseEnd, false)
	}
	if e, ok := errors.AsType[*idempotency.AbandonedError](err); ok {
		if c.w.cfg.policy != idempotency.AbandonBlock {
			c.violate(invBlocked, noExcuse, key, "%v was told AbandonedError under Abandon%s", inv.id, policyName(c.w.cfg.policy))
		}
		c.inProgress(inv, key, e.Deadline, true)
	}
	if e, ok := errors.AsType[*idempotency.CorruptedRecordError](err); ok {
		// The world never corrupts a record: every one was written whole.
		c.violate(invReplay, noExcuse, key, "%v was told its record is corrupted: %v", inv.id, e)
	}
	if _, ok := errors.AsType[*idempotency.PersistenceError](err); ok && inv.req.id >= probeRequest && len(inv.faults) == 0 &&
		inv.sb.clock.skew < c.w.cfg.timeout-time.Second {
		// Once the schedule is over, a request with no fault injected
		// must get through: nothing is locked for ever. (A sandbox whose
		// clock is ahead by about the timeout finds its deadline passed
		// before it starts: the skew is the fault.)
		c.violate(invOutcome, noExcuse, key, "%v, sent once every lease had ended and with no fault injected, got %v", inv.id, err)
	}
	if nothingHappened(err) && len(inv.effects) > 0 {
		c.violate(invOutcome, noExcuse, key, "%v made effect %v but was told %T: %v", inv.id, inv.effects, err, err)
	}
	if inv.succeeded && !c.w.cfg.invoker {
		c.violate(invOutcome, noExcuse, key, "%v's handler succeeded (effect %v) but its caller got %T: %v", inv.id, inv.effects, err, err)
	}
}

// inProgress judges a duplicate told that another holds the key, whose
// lease ends at end (an InProgressError), or that the holder is gone
// (abandoned, an AbandonedError, whose deadline is end): end must be a
// holder's real lease end, by the spec, and the answer must come before
// it (plus AbandonGrace under AbandonBlock and AbandonUncertain), or
// after it for abandoned.
func (c *checker) inProgress(inv *invocation, key string, end time.Time, abandoned bool) {
	var holder *tokenState
	for _, ts := range c.tokens {
		if ts.key == key && ts.owner != inv && !ts.reclaimed && ts.holderEnd.Equal(end) {
			holder = ts
			break
		}
	}
	if holder == nil {
		c.violate(invBlocked, c.key(key).lostBy, key, "%v was told the holder's lease ends at %s, which is no holder's deadline plus WithLeaseBeyondDeadline", inv.id, c.w.at(end))
		return
	}
	bound := holder.holderEnd.Add(c.tol())
	if c.w.cfg.policy != idempotency.AbandonRetry {
		bound = bound.Add(idempotency.AbandonGrace)
	}
	judged := clockOf(inv, inv.judgedAt)
	switch {
	case abandoned && judged.Add(2*c.tol()).Before(bound):
		c.violate(invBlocked, noExcuse, key, "%v was told AbandonedError on a clock read at %s, before %v's deadline %s and the grace",
			inv.id, c.w.at(judged), holder.owner.id, c.w.at(holder.holderEnd))
	case abandoned:
	case !inv.judgedAt.Before(bound):
		// As of the engine's last look at its clock: a verdict reached on
		// a reading taken before a slow request is the truth of its time.
		// A duplicate whose read failed answers with what it saw last
		// (docs/in-progress.md), when a fault made it fail.
		if inv.storeFailed && len(inv.faults) > 0 {
			return
		}
		c.violate(invBlocked, c.key(key).lostBy, key, "%v was told InProgressError on a clock read at %s, past %v's lease end %s and the grace",
			inv.id, c.w.at(inv.judgedAt), holder.owner.id, c.w.at(holder.holderEnd))
	}
}

// nothingHappened reports whether err tells the caller that nothing was
// done: the handler did not run, or its staged writes were not
// committed.
func nothingHappened(err error) bool {
	var (
		inProgress *idempotency.InProgressError
		conflict   *idempotency.PayloadConflictError
		abandoned  *idempotency.AbandonedError
		corrupted  *idempotency.CorruptedRecordError
		notStored  *idempotency.ResponseNotStoredError
		uncertain  *idempotency.UncertainError
		persist    *idempotency.PersistenceError
		commit     *idempotency.CommitError
	)
	switch {
	case errors.As(err, &inProgress), errors.As(err, &conflict), errors.As(err, &abandoned),
		errors.As(err, &corrupted), errors.As(err, &notStored):
		return true
	case errors.As(err, &uncertain) && uncertain.Key != "":
		return true // a duplicate's: the handler did not run
	case errors.As(err, &commit):
		return commit.State != idempotency.CommitUnknown
	case errors.As(err, &persist):
		return persist.Op != "complete"
	case errors.Is(err, errDeclined):
		return true
	}
	// The dynamo store's refusals of staged writes, which the middleware
	// returns as the handler's error: nothing was committed.
	var (
		staged *dynamo.StagedWriteError
		tx     *dynamo.TransactionError
		limit  *dynamo.TransactionLimitError
	)
	if errors.As(err, &staged) || errors.As(err, &tx) || errors.As(err, &limit) {
		return true
	}
	return false
}

// tokensOf are the tokens inv acquired.
func (c *checker) tokensOf(inv *invocation) []string {
	var out []string
	for tok, ts := range c.tokens {
		if ts.owner == inv {
			out = append(out, tok)
		}
	}
	return out
}

// encode is a receipt as the handler's response must read: the checker's
// own encoding, by encoding/json.
func encode(r receipt) []byte {
	b, _ := json.Marshal(r)
	return b
}

// parseReceipt reads a receipt as encoding/json wrote it, without
// decoding the note a large response carries: the fields come first, in
// the struct's order.
func parseReceipt(resp []byte) (receipt, bool) {
	head := resp
	if i := bytes.Index(head, []byte(`,"note"`)); i >= 0 {
		head = append(head[:i:i], '}')
	}
	var r receipt
	err := json.Unmarshal(head, &r)
	return r, err == nil
}

func contains[T comparable](xs []T, x T) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
