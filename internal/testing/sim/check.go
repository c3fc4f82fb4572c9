package sim

import (
	"fmt"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file holds the checker's state and vocabulary: the invariants, the
// documented limits, and what the checker knows of each key and lease
// token. It judges by the specification, never by what the code wrote:
// each expectation is computed here from the function's options (the
// plan's config), each invocation's deadline and clock on the world's
// time, and the faults the world injected, and the records, answers and
// effects the code produced are compared with it. It calls none of the library's helpers and copies none of
// its formulas. docs/simulation.md words each invariant and names the
// page that promises it.
const (
	// I1: an effect runs at most once per key within its record's life,
	// but after a fenced takeover: the earlier runner's lease had ended,
	// it was gone, and an injected fault explains why it had not
	// completed.
	invAtMostOnce = "I1 at most once"
	// I1F: every write or delete is made under the writer's own lease:
	// a record replaced or deleted only by its token's holder, or taken
	// over only once it is no longer live by the spec.
	invFenced = "I1F fenced"
	// I2: no caller receives a response made for another payload.
	invPayload = "I2 payload"
	// I3: a replay is of the exact bytes the key's holder completed, until
	// the record expires.
	invReplay = "I3 replay"
	// I4: an InProgressError names the holder's real lease end, and no
	// duplicate gets one past it.
	invBlocked = "I4 blocked"
	// I5: an invocation that reports that nothing happened made no
	// effect; one whose handler succeeded is not reported as failed.
	invOutcome = "I5 outcome"
	// I6: with the effect staged and committed with the record, one
	// committed effect per key and record life.
	invExactlyOnce = "I6 exactly once"
	// IR: each record written holds what the options say it must:
	// status, token, expiry, lease end, deadline, payload hash, response.
	invRecord = "IR record"
	// The simulator itself failed (a panic, a model asked something it
	// does not know): a bug to fix, reported like a violation.
	invSimulator = "simulator"
)

// The documented limits: a violation under one of them is reported, and
// counted, but is what the documentation says may happen, provided the
// injected fault that caused it is named.
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
	Limit string
	// Fault is the injected fault the limit names as its cause.
	Fault  string
	Key    string
	Detail string
	At     time.Duration // since the start
}

func (v Violation) String() string {
	s := fmt.Sprintf("%s at +%.3fs: %s", v.Invariant, v.At.Seconds(), v.Detail)
	if v.Limit != "" {
		s += " [documented limit: " + v.Limit + "; caused by: " + v.Fault + "]"
	}
	return s
}

// excuse is a documented limit and the injected fault that caused it; an
// excuse without a fault excuses nothing.
type excuse struct{ limit, fault string }

var noExcuse excuse

// recView is a record as a store keeps it, as the checker reads it from
// the store's format (docs/record-format.md, docs/redis.md), by its own
// reading.
type recView struct {
	status   idempotency.Status
	token    string
	expiry   time.Time
	leaseEnd time.Time
	deadline time.Time
	hash     string
	response []byte
	omitted  bool
	// deleteAt is when the server deletes the key (Redis's TTL), or zero.
	deleteAt time.Time
}

// tokenState is what the checker knows of one lease token: who took it,
// and what the spec says of its records.
type tokenState struct {
	owner *invocation
	key   string
	// acquiredAt is when its first record was written (world time).
	acquiredAt time.Time
	// holderEnd is the owner's deadline plus WithLeaseBeyondDeadline,
	// in the stores' millisecond precision: the lease end under
	// AbandonRetry, the record's deadline under the other policies.
	holderEnd time.Time
	// expiryLo is the earliest expiry the spec allows its current record:
	// before it, the record is live by every clock of the schedule.
	expiryLo time.Time
	// expiryHi is the latest: after it, the record has expired by every
	// clock of the schedule.
	expiryHi time.Time
	// expiredAt is when its record, expired, was taken over: its life
	// ended then, whoever runs the key next.
	expiredAt time.Time
	// rec is the latest record carrying the token that a store holds;
	// nil once deleted or lost.
	rec       *recView
	released  bool // deleted by a Release
	lost      bool // lost in a failover
	lostBy    excuse
	reclaimed bool // taken by a Reclaim, to reconcile
	// reconciling: its record is the UNCERTAIN record of a reconciling
	// invocation, with its lease (not yet held again without one).
	reconciling bool
	// running is the fault under which it was taken over while its
	// owner still ran (a clock ahead), or "".
	takenWhileRunning excuse
}

// completion is a COMPLETED record of a key: the bytes its holder
// completed, and when it stops counting.
type completion struct {
	token    string
	response []byte // what the holder produced, by the checker's encoding
	omitted  bool
	expiryLo time.Time // the spec's earliest expiry
	expiryHi time.Time // and latest
	expiry   time.Time // the stored one, checked against the spec
	lostBy   excuse    // set when the record was lost
	replayed bool      // a caller was given it as a replay
}

// keyState is what the checker knows of one key.
type keyState struct {
	holder      string // the token of the last acquisition
	lastEffect  *effectRec
	complete    *completion
	previous    *completion   // the one before, for replies at the boundary
	completions []*completion // every one, the latest last
	lostBy      excuse        // a write of this key was lost in a failover
	regions     [2]time.Time
}

type effectRec struct {
	inv   *invocation
	token string
	n     int
	at    time.Time
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
	// hashes are the payload hashes seen, by the amount they were made
	// for, and the other way round: one payload, one hash.
	hashes  map[int]string
	amounts map[string]int
	// misreconciled are the effects a reconcile function returned for
	// another payload (limitReconcileLives), with the request that
	// reused the key.
	misreconciled map[int]string
}

func newChecker(w *world) *checker {
	return &checker{w: w, tokens: map[string]*tokenState{}, keys: map[string]*keyState{},
		hashes: map[int]string{}, amounts: map[string]int{}, misreconciled: map[int]string{}}
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

// violate reports a violation, excused by ex when ex names both a limit
// and the fault that caused it.
func (c *checker) violate(invariant string, ex excuse, key, format string, args ...any) {
	if ex.limit == "" && c.w.cfg.store == StoreGlobalEventual {
		ex = c.twoRegions(key)
	}
	detail := fmt.Sprintf(format, args...)
	if ex.limit != "" && ex.fault == "" {
		detail += " (the documented limit " + ex.limit + " names no injected fault here: no excuse)"
		ex = noExcuse
	}
	v := Violation{Invariant: invariant, Limit: ex.limit, Fault: ex.fault, Key: key, Detail: detail, At: c.w.s.now.Sub(epoch)}
	c.violations = append(c.violations, v)
	if c.w.trace != nil {
		c.w.trace.log(nil, "VIOLATION %s", v)
	}
}

// twoRegions is the excuse of a key written from both Regions of a
// global table in eventual consistency.
func (c *checker) twoRegions(key string) excuse {
	ks := c.keys[key]
	if ks == nil || ks.regions[0].IsZero() || ks.regions[1].IsZero() {
		return noExcuse
	}
	return excuse{limitMREC, fmt.Sprintf("written in Region 0 at %s and in Region 1 at %s", c.w.at(ks.regions[0]), c.w.at(ks.regions[1]))}
}

// fail reports a failure of the simulator itself.
func (c *checker) fail(format string, args ...any) {
	c.violate(invSimulator, noExcuse, "", format, args...)
}

// holderEnd is, by the spec, the end of inv's lease: its deadline on the
// world's clock plus WithLeaseBeyondDeadline, stored to the millisecond.
func (c *checker) holderEnd(inv *invocation) time.Time {
	return inv.deadline.Add(c.w.cfg.leaseBeyond).Truncate(time.Millisecond)
}

// clock is inv's sandbox's clock at the world's time t.
func clockOf(inv *invocation, t time.Time) time.Time { return t.Add(inv.sb.clock.skew) }

// gone is the fault that explains why inv, which held a key, did not
// complete it: its death, or a fault of the store's after since (not of
// its handler's downstream, after which it holds the key UNCERTAIN); ""
// when nothing injected explains it.
func (c *checker) gone(inv *invocation, since time.Time) string {
	if inv.died {
		return inv.death
	}
	for _, f := range inv.faults {
		if f.store && !f.at.Before(since) {
			return f.String()
		}
	}
	if o := c.w.failoverAfter(since); o != "" {
		return o
	}
	return ""
}

// died is told that inv's process died.
func (c *checker) died(inv *invocation) {
	if c.w.s.now.Before(inv.deadline) {
		c.stats.Crashes++
	} else {
		c.stats.Timeouts++
	}
}

// name abbreviates a lease token for reports: its first 6 digits.
func (c *checker) name(token string) string {
	if token == "" {
		return "(none)"
	}
	if len(token) > 6 {
		return token[:6]
	}
	return token
}

// injected is a fault the world injected into an invocation's requests.
type injected struct {
	at    time.Time
	what  string
	store bool // a fault of a store request
}

func (f injected) String() string {
	return fmt.Sprintf("%s at +%.3fs", f.what, f.at.Sub(epoch).Seconds())
}

// inject notes a fault injected into inv's store requests, for the
// excuses that name it.
func (w *world) inject(inv *invocation, format string, args ...any) {
	inv.faults = append(inv.faults, injected{at: w.s.now, what: fmt.Sprintf(format, args...), store: true})
}

// injectHandler notes a fault injected into inv's handler or its
// downstream.
func (w *world) injectHandler(inv *invocation, format string, args ...any) {
	inv.faults = append(inv.faults, injected{at: w.s.now, what: fmt.Sprintf(format, args...)})
}
