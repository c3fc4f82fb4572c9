package sim

import (
	"fmt"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file holds the invariants, checked as the schedule runs; the
// violations are reported with the seed. docs/simulation.md words each
// one and names the page that promises it.
const (
	// I1: an effect runs at most once per key within its record's life,
	// but after a fenced takeover: the earlier runner's lease had ended
	// and it was gone, and it can no longer write (see I1F).
	invAtMostOnce = "I1 at most once"
	// I1F: no write carrying a lease token succeeds once another
	// invocation has taken the key over.
	invFenced = "I1F fenced"
	// I2: no caller receives a response made for another payload.
	invPayload = "I2 payload"
	// I3: a stored response is replayed byte for byte until it expires.
	invReplay = "I3 replay"
	// I4: no record holds its key past its lease plus the grace.
	invBlocked = "I4 blocked"
	// I5: an invocation that reports that nothing happened made no
	// effect; one whose handler succeeded is not reported as failed.
	invOutcome = "I5 outcome"
	// I6: with the effect staged and committed with the record, one
	// committed effect per key and record life.
	invExactlyOnce = "I6 exactly once"
	// The simulator itself failed (a panic, a model asked something it
	// does not know): a bug to fix, reported like a violation.
	invSimulator = "simulator"
)

// The documented limits: a violation under one of them is reported, and
// counted, but is what the documentation says may happen.
const (
	// limitSkew: a sandbox's clock ahead of the holder's deadline by more
	// than WithLeaseBeyondDeadline took the key over while its holder
	// still ran (docs/reliability.md).
	limitSkew = "clock skew beyond WithLeaseBeyondDeadline"
	// limitRedisFailover: a Redis failover lost a write the store had
	// been told was made: asynchronous replication, without WAIT
	// (docs/redis.md).
	limitRedisFailover = "Redis failover without WAIT"
	// limitMREC: a global table in multi-Region eventual consistency,
	// written in two Regions (docs/multi-region.md); the store refuses
	// such a table unless Options.AcceptEventualGlobalTable.
	limitMREC = "global table with eventual consistency"
	// limitReconcileLives: a reconcile function, asking the downstream by
	// the key alone, found the effect of an earlier record of the key,
	// since expired, made for another payload (docs/reliability.md).
	limitReconcileLives = "reconcile by key across an expired record"
)

// Violation is one invariant broken in a schedule.
type Violation struct {
	Invariant string
	// Limit is the documented limit that explains it, or "".
	Limit  string
	Key    string
	Detail string
	At     time.Duration // since the start
}

func (v Violation) String() string {
	s := fmt.Sprintf("%s at +%.3fs: %s", v.Invariant, v.At.Seconds(), v.Detail)
	if v.Limit != "" {
		s += " [documented limit: " + v.Limit + "]"
	}
	return s
}

// recView is a record as a store keeps it, as the checker reads it.
type recView struct {
	status   idempotency.Status
	token    string
	expiry   time.Time
	leaseEnd time.Time
	deadline time.Time
	response []byte
	omitted  bool
}

func viewOf(r *idempotency.Record) *recView {
	if r == nil {
		return nil
	}
	return &recView{status: r.Status, token: r.LeaseToken, expiry: r.Expiry, leaseEnd: r.LeaseEnd,
		deadline: r.Deadline, response: r.Response, omitted: r.ResponseOmitted}
}

// tokenState is what the checker knows of one lease token.
type tokenState struct {
	owner *invocation
	// rec is the latest record carrying the token that a store holds;
	// nil once deleted or lost.
	rec       *recView
	released  bool   // deleted by a Release
	lostLabel string // lost in a failover: the limit that explains it, if any
	lost      bool
}

// completion is a COMPLETE record a store holds for a key.
type completion struct {
	token    string
	response []byte
	omitted  bool
	expiry   time.Time
	label    string // set when the record was lost, by the limit that explains it
	replayed bool   // a caller was given it as a replay
}

// keyState is what the checker knows of one key.
type keyState struct {
	holder      string // the token of the last acquisition
	lastEffect  *effectRec
	complete    *completion
	previous    *completion // the one before, for replies at the boundary
	lostLabel   string      // a write of this key was lost in a failover
	twoRegions  bool        // written from both Regions of a global table
	lastRegions int
}

type effectRec struct {
	inv   *invocation
	token string
	n     int
}

// Stats counts what the schedules did.
type Stats struct {
	Schedules, Invocations, Effects int
	// FencedTakeovers are effects run again after a lease ended and its
	// holder was gone; RerunsAfterExpiry after the record expired.
	FencedTakeovers, RerunsAfterExpiry int
	Crashes, Timeouts                  int
	Violations, Excused                int
}

func (s *Stats) Add(o Stats) {
	s.Schedules += o.Schedules
	s.Invocations += o.Invocations
	s.Effects += o.Effects
	s.FencedTakeovers += o.FencedTakeovers
	s.RerunsAfterExpiry += o.RerunsAfterExpiry
	s.Crashes += o.Crashes
	s.Timeouts += o.Timeouts
	s.Violations += o.Violations
	s.Excused += o.Excused
}

// checker checks one schedule.
type checker struct {
	w          *world
	tokens     map[string]*tokenState
	keys       map[string]*keyState
	violations []Violation
	stats      Stats
	// misreconciled are the effects a reconcile function returned for
	// another payload (limitReconcileLives).
	misreconciled map[int]bool
}

func newChecker(w *world) *checker {
	return &checker{w: w, tokens: map[string]*tokenState{}, keys: map[string]*keyState{}, misreconciled: map[int]bool{}}
}

// tol is how far two sandboxes' clocks may disagree: what a judgement of
// "expired" or "ended" by the engine may be early or late by.
func (c *checker) tol() time.Duration { return c.w.cfg.maxSkew + time.Millisecond }

func (c *checker) key(k string) *keyState {
	ks := c.keys[k]
	if ks == nil {
		ks = &keyState{}
		c.keys[k] = ks
	}
	return ks
}

func (c *checker) violate(invariant, label, key, format string, args ...any) {
	if c.w.cfg.store == StoreGlobalEventual && label == "" && c.key(key).twoRegions {
		label = limitMREC
	}
	v := Violation{Invariant: invariant, Limit: label, Key: key, Detail: fmt.Sprintf(format, args...), At: c.w.s.now.Sub(epoch)}
	c.violations = append(c.violations, v)
	if c.w.trace != nil {
		c.w.trace.log(nil, "VIOLATION %s", v)
	}
}

// fail reports a failure of the simulator itself.
func (c *checker) fail(format string, args ...any) {
	c.violate(invSimulator, "", "", format, args...)
}

// wrote is told of every write a client's request made to a store (not
// those a replication or a TTL sweep makes): before and after are the
// record before and after it, nil when there was or is none.
func (c *checker) wrote(inv *invocation, key string, before, after *recView, region int) {
	ks := c.key(key)
	if ks.lastRegions != 0 && ks.lastRegions != region+1 {
		ks.twoRegions = true
	}
	ks.lastRegions = region + 1
	now := c.w.s.now
	if after == nil { // a delete
		if before == nil {
			return
		}
		if ks.holder != before.token {
			c.violate(invFenced, ks.lostLabel, key, "%v deleted the record of token %s after %s took the key", inv.id, c.name(before.token), c.name(ks.holder))
		}
		if ts := c.tokens[before.token]; ts != nil {
			ts.rec, ts.released = nil, true
		}
		ks.holder = ""
		return
	}
	beforeToken := ""
	if before != nil {
		beforeToken = before.token
	}
	ts := c.tokens[after.token]
	if after.token != beforeToken && after.status != idempotency.StatusComplete {
		// An acquisition: Acquire's IN_PROGRESS, or Reclaim's UNCERTAIN
		// under a new token.
		if ts == nil {
			ts = &tokenState{owner: inv}
			c.tokens[after.token] = ts
		}
		ts.rec = after
		ks.holder = after.token
		inv.token, inv.acquiredAt = after.token, now
		if c.w.trace != nil {
			c.w.trace.log(inv, "holds %s under token %s, lease until %s, expiry %s", short(key), c.name(after.token), c.w.at(after.leaseEnd), c.w.at(after.expiry))
		}
		return
	}
	if ks.holder != after.token {
		c.violate(invFenced, ks.lostLabel, key, "%v wrote a %s record under token %s after %s took the key", inv.id, after.status, c.name(after.token), c.name(ks.holder))
	}
	if ts == nil {
		c.fail("a record written under token %s, which no acquisition wrote", after.token)
		return
	}
	ts.rec = after
	if after.status != idempotency.StatusComplete {
		return
	}
	if le := ks.lastEffect; le != nil && ts.owner.reconciled == le.n {
		// A reconciled effect: the record that now stands for it is this
		// one.
		le.token = after.token
	}
	if cur := ks.complete; cur != nil && cur.token != after.token && now.Before(cur.expiry.Add(-c.tol())) {
		c.violate(invReplay, cur.label, key, "the response stored under token %s was replaced by %s's before it expired at %s",
			c.name(cur.token), c.name(after.token), c.w.at(cur.expiry))
	}
	if ks.complete == nil || ks.complete.token != after.token {
		ks.previous = ks.complete
	}
	ks.complete = &completion{token: after.token, response: after.response, omitted: after.omitted, expiry: after.expiry}
}

// deleted is told of a record a TTL sweep or a server's expiry deleted.
func (c *checker) deleted(key string, rec *recView) {
	if ks := c.keys[key]; ks != nil && ks.holder == rec.token {
		ks.holder = ""
	}
}

// reverted is told that a failover replaced the record of key with now
// (nil: none); label names the limit that explains it when writes the
// clients had been told were made were lost.
func (c *checker) reverted(key string, now *recView, label string) {
	ks := c.key(key)
	if label != "" {
		ks.lostLabel = label
	}
	for tok, ts := range c.tokens {
		if ts.rec == nil || ts.lost || c.keyOf(ts) != key {
			continue
		}
		switch {
		case now != nil && now.token == tok:
			ts.rec = now
		case tok == ks.holder:
			// The key's record, gone: tokens it had taken over from
			// lost their record before, not now.
			ts.rec, ts.lost, ts.lostLabel = nil, true, label
		}
	}
	if cur := ks.complete; cur != nil && (now == nil || now.status != idempotency.StatusComplete || now.token != cur.token) {
		if label == "" && !cur.replayed {
			// Lost before anyone but its writer, who was not told it was
			// made, could see it: as if its Complete had failed.
			ks.complete, ks.previous = nil, nil
		} else {
			cur.label = label
		}
	}
	ks.holder = ""
	if now != nil {
		ks.holder = now.token
	}
}

// keyOf is the key a token's invocation works on.
func (c *checker) keyOf(ts *tokenState) string {
	return ts.owner.key
}

// effect is told of an effect the downstream made for key, or (staged
// is true) of a committed transaction that held it.
func (c *checker) effect(inv *invocation, key string, n, amount int) {
	c.stats.Effects++
	invariant := invAtMostOnce
	if c.w.cfg.invoker {
		invariant = invExactlyOnce
	}
	ks := c.key(key)
	defer func() { ks.lastEffect = &effectRec{inv: inv, token: inv.token, n: n} }()
	if inv.token == "" {
		c.violate(invariant, "", key, "%v made effect %d without holding the key", inv.id, n)
		return
	}
	prev := ks.lastEffect
	if prev == nil || prev.inv == inv {
		return
	}
	this := &effectRec{inv: inv, token: inv.token, n: n}
	if inv.acquiredAt.Before(prev.inv.acquiredAt) {
		// prev's invocation took the key after this one did, which made
		// its effect late (its Acquire's answer came late, say): the
		// takeover to judge is prev's, of this one's record.
		c.judge(invariant, key, this, prev)
		return
	}
	c.judge(invariant, key, prev, this)
}

// judge decides whether taker, whose invocation took key at its
// acquiredAt, could make its effect beside holder's, made under the
// record that taker's acquisition replaced.
func (c *checker) judge(invariant, key string, holder, taker *effectRec) {
	prev, inv := holder, taker.inv
	ts := c.tokens[prev.token]
	tB := inv.acquiredAt
	tol := c.tol()
	ks := c.key(key)
	what := fmt.Sprintf("effect %d by %v (token %s, taken at %s) beside effect %d by %v (token %s, taken at %s)",
		taker.n, inv.id, c.name(inv.token), c.w.at(tB), prev.n, prev.inv.id, c.name(prev.token), c.w.at(prev.inv.acquiredAt))
	switch {
	case ts == nil:
		c.violate(invariant, "", key, "%s: the earlier token is unknown", what)
	case ts.lost:
		c.violate(invariant, ts.lostLabel, key, "%s: the earlier record was lost in a failover", what)
	case ts.released:
		c.violate(invariant, "", key, "%s: the earlier record was released after its effect", what)
	case ts.rec == nil:
		c.violate(invariant, ks.lostLabel, key, "%s: the earlier record is gone", what)
	case !ts.rec.expiry.IsZero() && !tB.Before(ts.rec.expiry.Add(-tol)):
		c.stats.RerunsAfterExpiry++
	case ts.rec.status == idempotency.StatusInProgress && c.w.cfg.invoker && invariant == invExactlyOnce:
		// A committed effect always comes with its COMPLETE record: an
		// IN_PROGRESS one here means two commits.
		c.violate(invariant, "", key, "%s: two committed effects in one record's life", what)
	case ts.rec.status == idempotency.StatusInProgress:
		gone := prev.inv.ended && !prev.inv.endedAt.After(tB)
		switch {
		case gone && !tB.Before(ts.rec.leaseEnd.Add(-tol)):
			c.stats.FencedTakeovers++
		case !gone && !tB.Add(inv.sb.clock.skew).Before(ts.rec.leaseEnd) && tB.Before(ts.rec.leaseEnd):
			inv.limit, prev.inv.limit = limitSkew, limitSkew
			c.violate(invariant, limitSkew, key, "%s: taken over while %v still ran, %v before its lease ended at %s, by a clock %v ahead",
				what, prev.inv.id, ts.rec.leaseEnd.Sub(tB), c.w.at(ts.rec.leaseEnd), inv.sb.clock.skew)
		default:
			c.violate(invariant, ks.lostLabel, key, "%s: taken over while the earlier lease (until %s) was live (its holder gone: %v)",
				what, c.w.at(ts.rec.leaseEnd), gone)
		}
	default:
		c.violate(invariant, ks.lostLabel, key, "%s: the earlier record is %s until %s", what, ts.rec.status, c.w.at(ts.rec.expiry))
	}
}

// died is told that inv's process died.
func (c *checker) died(inv *invocation) {
	if c.w.s.now.Before(inv.deadline) {
		c.stats.Crashes++
	} else {
		c.stats.Timeouts++
	}
}
