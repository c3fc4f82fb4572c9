package sim

import (
	"bytes"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file judges each write and delete a client's request makes to a
// store, at the moment the store applies it: against the writer's own
// lease (I1F), and the record written against what the function's
// options say it must hold (IR). The expectations are the checker's own:
// a lease ends at its holder's deadline plus WithLeaseBeyondDeadline,
// a record expires WithExpiresAfter after its writer's clock read, under
// AbandonBlock and AbandonUncertain an IN_PROGRESS record is taken over by
// no one before it expires (docs/in-progress.md, docs/record-format.md).

// write is what a write does, by the spec.
type write int

const (
	writeAcquire  write = iota // Acquire: a new IN_PROGRESS record, new token
	writeReclaim               // Reclaim: an UNCERTAIN record, new token, to reconcile
	writeHold                  // the holder keeps an uncertain outcome: UNCERTAIN
	writeAbandon               // a duplicate marks an abandoned holder's record UNCERTAIN
	writeComplete              // the holder's COMPLETED record
)

// wrote is told of every write a client's request made to a store (not
// those a replication or a TTL sweep makes): before and after are the
// record before and after it, nil when there was or is none.
func (c *checker) wrote(inv *invocation, key string, before, after *recView, region int) {
	ks := c.key(key)
	ks.regions[region] = c.w.s.now
	if inv == nil {
		c.fail("a write to %s by no invocation", short(key))
		return
	}
	switch {
	case after == nil:
		c.deletedBy(inv, key, before)
	case before != nil && before.token == after.token:
		c.rewrote(inv, key, before, after)
	case c.tokens[after.token] != nil && c.tokens[after.token].owner == inv && after.status == idempotency.StatusInProgress:
		// The SDK's or the engine's next attempt at an Acquire, after the
		// record the first wrote was replaced or deleted: an acquisition
		// again, under the same token.
		c.acquired(inv, key, before, after)
	case c.tokens[after.token] != nil:
		c.violate(invFenced, ks.lostBy, key, "%v wrote a %s record under token %s (held by %v) over %s: the store let a write through that its token no longer allowed",
			inv.id, after.status, c.name(after.token), c.tokens[after.token].owner.id, c.describe(before))
	case after.status == idempotency.StatusComplete:
		c.violate(invFenced, ks.lostBy, key, "%v wrote a COMPLETED record under a token no acquisition wrote, over %s", inv.id, c.describe(before))
	default:
		c.acquired(inv, key, before, after)
	}
}

func (c *checker) describe(r *recView) string {
	if r == nil {
		return "no record"
	}
	return string(r.status) + " record of token " + c.name(r.token)
}

// acquired judges an acquisition: a new token's record written over
// before.
func (c *checker) acquired(inv *invocation, key string, before, after *recView) {
	now := c.w.s.now
	ts := c.tokens[after.token]
	if ts == nil {
		ts = &tokenState{owner: inv, key: key, acquiredAt: now, holderEnd: c.holderEnd(inv)}
	}
	kind := writeAcquire
	if after.status == idempotency.StatusUncertain {
		kind, ts.reclaimed = writeReclaim, true
	}
	c.tokens[after.token] = ts
	if before != nil {
		c.takeover(inv, key, before, kind)
	}
	ks := c.key(key)
	ks.holder = after.token
	inv.token, inv.acquiredAt = after.token, now
	c.record(inv, key, ts, kind, before, after)
	ts.rec = after
	if c.w.trace != nil {
		c.w.trace.log(inv, "holds %s under token %s, lease until %s, expiry %s", short(key), c.name(after.token), c.w.at(after.leaseEnd), c.w.at(after.expiry))
	}
}

// takeover judges inv's acquisition of key over before: the spec lets a
// record be replaced only once it is not live, by inv's own clock.
func (c *checker) takeover(inv *invocation, key string, before *recView, kind write) {
	prev := c.tokens[before.token]
	if prev == nil {
		return // a record the checker never saw written: restored by a failover
	}
	now := c.w.s.now
	clock := clockOf(inv, now) // inv judged at or before now: its clock then read at most this
	policy := c.w.cfg.policy
	switch {
	case kind == writeReclaim && before.status != idempotency.StatusUncertain:
		c.violate(invFenced, noExcuse, key, "%v reclaimed the %s record of token %s: Reclaim takes only an UNCERTAIN record", inv.id, before.status, c.name(before.token))
	case kind == writeReclaim:
		if !c.w.cfg.reconcile {
			c.violate(invFenced, noExcuse, key, "%v reclaimed an UNCERTAIN record without a reconcile function", inv.id)
		} else if prev.reconciling && clock.Before(prev.holderEnd) {
			c.violate(invFenced, noExcuse, key, "%v reclaimed the UNCERTAIN record of %v, whose reconciling lease ends at %s, on a clock at %s",
				inv.id, prev.owner.id, c.w.at(prev.holderEnd), c.w.at(clock))
		}
	case !clock.Before(prev.expiryLo):
		// Expired by every clock that reads at least this one: its
		// record's life is over.
		if prev.expiredAt.IsZero() {
			prev.expiredAt = now
		}
	case before.status != idempotency.StatusInProgress:
		c.violate(invFenced, noExcuse, key, "%v took over the live %s record of %v (token %s) on a clock at %s, before its expiry (not before %s)",
			inv.id, before.status, prev.owner.id, c.name(before.token), c.w.at(clock), c.w.at(prev.expiryLo))
	case policy != idempotency.AbandonRetry:
		c.violate(invFenced, noExcuse, key, "%v took over the IN_PROGRESS record of %v (token %s) under Abandon%s, before it expired (not before %s): no takeover is allowed",
			inv.id, prev.owner.id, c.name(before.token), policyName(policy), c.w.at(prev.expiryLo))
	case clock.Before(prev.holderEnd):
		c.violate(invFenced, noExcuse, key, "%v took over the lease of %v (token %s), which ends at %s, on a clock at %s",
			inv.id, prev.owner.id, c.name(before.token), c.w.at(prev.holderEnd), c.w.at(clock))
	case now.Before(prev.holderEnd) && !prev.owner.ended:
		// Ended by inv's clock, not by the world's: its holder still runs.
		prev.takenWhileRunning = excuse{limitSkew, inv.sb.skewFault()}
	}
}

func policyName(p idempotency.AbandonPolicy) string {
	return map[idempotency.AbandonPolicy]string{idempotency.AbandonBlock: "Block", idempotency.AbandonUncertain: "Uncertain"}[p]
}

// rewrote judges a write of a record that keeps its token: the holder's
// COMPLETED or UNCERTAIN record, or a duplicate marking an abandoned
// holder's record UNCERTAIN.
func (c *checker) rewrote(inv *invocation, key string, before, after *recView) {
	ks := c.key(key)
	ts := c.tokens[after.token]
	if ts == nil {
		c.fail("a record written under token %s, which no acquisition wrote", after.token)
		return
	}
	if ks.holder != after.token {
		c.violate(invFenced, ks.lostBy, key, "%v wrote a %s record under token %s after %s took the key", inv.id, after.status, c.name(after.token), c.name(ks.holder))
	}
	kind := writeComplete
	switch {
	case inv != ts.owner:
		kind = writeAbandon
		// A repeat of that write (its answer lost) meets its own record.
		repeat := before.status == idempotency.StatusUncertain && after.status == idempotency.StatusUncertain &&
			after.expiry.Equal(before.expiry) && after.leaseEnd.IsZero() && before.leaseEnd.IsZero()
		allowed := c.w.cfg.policy == idempotency.AbandonUncertain && (before.status == idempotency.StatusInProgress || repeat) &&
			after.status == idempotency.StatusUncertain && !clockOf(inv, c.w.s.now).Before(ts.holderEnd.Add(idempotency.AbandonGrace))
		if !allowed {
			c.violate(invFenced, noExcuse, key, "%v wrote a %s record under token %s, held by %v (whose lease ends at %s)",
				inv.id, after.status, c.name(after.token), ts.owner.id, c.w.at(ts.holderEnd))
		}
	case before.status == idempotency.StatusComplete && after.status != idempotency.StatusComplete:
		c.violate(invReplay, noExcuse, key, "%v turned its COMPLETED record into %s", inv.id, after.status)
	case after.status == idempotency.StatusUncertain && ts.reclaimed && !after.leaseEnd.IsZero():
		kind = writeReclaim // an earlier attempt's Reclaim, written again
	case after.status == idempotency.StatusUncertain:
		kind = writeHold
	case after.status == idempotency.StatusInProgress:
		kind = writeAcquire // an earlier attempt's record, written again
	}
	c.record(inv, key, ts, kind, before, after)
	ts.rec = after
	if after.status == idempotency.StatusComplete {
		c.completed(ts.owner, key, after.token, ts, after)
	}
}

// completed notes the key's COMPLETED record, with the bytes its holder
// produced.
func (c *checker) completed(owner *invocation, key, token string, ts *tokenState, rec *recView) {
	ks := c.key(key)
	now := c.w.s.now
	if le := ks.lastEffect; le != nil && owner.reconciled == le.n {
		le.token = token // a reconciled effect: this record stands for it
	}
	if cur := ks.complete; cur != nil && cur.token != token && now.Before(cur.expiryLo.Add(-c.tol())) {
		c.violate(invReplay, cur.lostBy, key, "the response stored under token %s was replaced by %s's before it expired (not before %s)",
			c.name(cur.token), c.name(token), c.w.at(cur.expiryLo))
	}
	if ks.complete == nil || ks.complete.token != token {
		ks.previous = ks.complete
	}
	ks.complete = &completion{token: token, response: owner.produced, omitted: rec.omitted, expiryLo: ts.expiryLo, expiryHi: ts.expiryHi, expiry: rec.expiry}
	ks.completions = append(ks.completions, ks.complete)
}

// record judges rec, written by inv under ts as kind, against what the
// options say it must hold (IR).
func (c *checker) record(inv *invocation, key string, ts *tokenState, kind write, before, rec *recView) {
	cfg := c.w.cfg
	now := c.w.s.now
	bad := func(format string, args ...any) {
		c.violate(invRecord, noExcuse, key, "%v's %s record (token %s): "+format, append([]any{inv.id, rec.status, c.name(rec.token)}, args...)...)
	}
	want := map[write]idempotency.Status{writeAcquire: idempotency.StatusInProgress, writeReclaim: idempotency.StatusUncertain,
		writeHold: idempotency.StatusUncertain, writeAbandon: idempotency.StatusUncertain, writeComplete: idempotency.StatusComplete}[kind]
	if rec.status != want {
		bad("the status is %q, want %q", rec.status, want)
	}
	// Expiry: WithExpiresAfter from the writer's clock read, between its
	// start and now, in whole seconds; an abandoned record keeps its own.
	skew := inv.sb.clock.skew
	lo := inv.start.Add(skew + cfg.expiry).Truncate(time.Second)
	hi := now.Add(skew + cfg.expiry)
	if kind == writeAbandon {
		// The abandoned record's own expiry, or WithExpiresAfter from now,
		// as for a handler's uncertain outcome (docs/in-progress.md).
		if before != nil && !rec.expiry.Equal(before.expiry) && (rec.expiry.Before(lo) || rec.expiry.After(hi)) {
			bad("the expiry is %s, neither the abandoned record's %s nor WithExpiresAfter from now", c.w.at(rec.expiry), c.w.at(before.expiry))
		}
	} else {
		if rec.expiry.Before(lo) || rec.expiry.After(hi) {
			bad("the expiry is %s, want WithExpiresAfter (%v) after the writer's clock read, between %s and %s", c.w.at(rec.expiry), cfg.expiry, c.w.at(lo), c.w.at(hi))
		}
		ts.expiryLo, ts.expiryHi = lo, hi
	}
	// Lease and deadline.
	var wantLease, wantDeadline time.Time
	switch {
	case kind == writeAcquire && cfg.policy == idempotency.AbandonRetry, kind == writeReclaim:
		wantLease = ts.holderEnd
	case kind == writeAcquire:
		wantDeadline = ts.holderEnd
		if rec.leaseEnd.Before(rec.expiry) || !rec.leaseEnd.Before(rec.expiry.Add(time.Second)) {
			bad("the lease ends at %s, want with the record's expiry %s under Abandon%s", c.w.at(rec.leaseEnd), c.w.at(rec.expiry), policyName(cfg.policy))
		}
		wantLease = rec.leaseEnd
	}
	if !rec.leaseEnd.Equal(wantLease) {
		bad("the lease ends at %s, want %s (the writer's deadline %s plus WithLeaseBeyondDeadline %v)", c.w.at(rec.leaseEnd), c.w.at(wantLease), c.w.at(inv.deadline), cfg.leaseBeyond)
	}
	if !rec.deadline.Equal(wantDeadline) {
		bad("the deadline is %s, want %s", c.w.at(rec.deadline), c.w.at(wantDeadline))
	}
	c.payloadHash(inv, key, ts, kind, before, rec, bad)
	ts.reconciling = kind == writeReclaim
	// The response: the bytes the holder produced, or none when too
	// large for the store; a response store's envelope is its own.
	switch {
	case kind != writeComplete:
		if len(rec.response) > 0 || rec.omitted {
			bad("it holds a response")
		}
	case rec.omitted:
		if len(ts.owner.produced) < maxItem-50*1024 {
			bad("the response of %d bytes was not stored", len(ts.owner.produced))
		}
	case cfg.responseStore:
	case !bytes.Equal(rec.response, ts.owner.produced):
		bad("the response is %.80q, not the %.80q its holder produced", rec.response, ts.owner.produced)
	}
	// Redis's TTL: the time left to the expiry on the writer's clock,
	// plus a minute, counted by the server from the write.
	if !rec.deleteAt.IsZero() {
		const after = time.Minute
		lo := earliest(rec.expiry.Add(-skew), now).Add(after - time.Millisecond)
		hi := latest(rec.expiry.Add(time.Second-skew+now.Sub(inv.start)), now).Add(after + time.Millisecond)
		if rec.deleteAt.Before(lo) || rec.deleteAt.After(hi) {
			bad("the server deletes it at %s, want a minute after its expiry %s on the writer's clock (between %s and %s)",
				c.w.at(rec.deleteAt), c.w.at(rec.expiry), c.w.at(lo), c.w.at(hi))
		}
	}
}

// payloadHash judges a record's payload hash: none without validation;
// with it, one hash per payload, the same for every record of a payload.
func (c *checker) payloadHash(inv *invocation, key string, ts *tokenState, kind write, before, rec *recView, bad func(string, ...any)) {
	if !c.w.cfg.validation {
		if rec.hash != "" {
			bad("it holds a payload hash without WithPayloadValidation")
		}
		return
	}
	if kind == writeAbandon {
		if before != nil && rec.hash != before.hash {
			bad("the payload hash is not the abandoned record's")
		}
		return
	}
	amount := ts.owner.amount
	if kind == writeAcquire || kind == writeReclaim {
		amount = inv.amount
	}
	if h, ok := c.hashes[amount]; ok && h != rec.hash {
		bad("the payload hash %.12s differs from %.12s, an earlier record's for the same payload (amount %d)", rec.hash, h, amount)
	}
	if a, ok := c.amounts[rec.hash]; ok && a != amount {
		bad("the payload hash %.12s is that of another payload (amount %d, not %d)", rec.hash, a, amount)
	}
	if rec.hash == "" {
		bad("no payload hash with WithPayloadValidation")
	}
	c.hashes[amount], c.amounts[rec.hash] = rec.hash, amount
}

// deletedBy judges a delete inv's request made: only a token's holder
// releases its record, and never a COMPLETED one.
func (c *checker) deletedBy(inv *invocation, key string, before *recView) {
	if before == nil {
		return
	}
	ks := c.key(key)
	ts := c.tokens[before.token]
	switch {
	case ts == nil || ts.owner != inv:
		holder := "no acquisition"
		if ts != nil {
			holder = ts.owner.id.String()
		}
		c.violate(invFenced, ks.lostBy, key, "%v deleted the %s record of token %s, held by %s", inv.id, before.status, c.name(before.token), holder)
	case before.status == idempotency.StatusComplete:
		c.violate(invReplay, noExcuse, key, "%v deleted its own COMPLETED record before it expired", inv.id)
	}
	if ts != nil {
		ts.rec, ts.released = nil, true
	}
	if ks.holder == before.token {
		ks.holder = ""
	}
}

// deleted is told of a record a TTL sweep or a server's expiry deleted:
// not before the record expired by the spec.
func (c *checker) deleted(key string, rec *recView) {
	ks := c.keys[key]
	if ks == nil {
		return
	}
	if ts := c.tokens[rec.token]; ts != nil && c.w.s.now.Add(c.tol()).Before(ts.expiryLo) {
		c.violate(invRecord, noExcuse, key, "the server deleted the %s record of token %s at %s, before its expiry (not before %s)",
			rec.status, c.name(rec.token), c.w.at(c.w.s.now), c.w.at(ts.expiryLo))
	}
	if ks.holder == rec.token {
		ks.holder = ""
	}
}

// reverted is told that a failover replaced the record of key with now
// (nil: none); ex names the limit and the failover when writes the
// clients had been told were made were lost.
func (c *checker) reverted(key string, now *recView, lostTokens []string, ex excuse) {
	ks := c.key(key)
	if ex.limit != "" {
		ks.lostBy = ex
	}
	for tok, ts := range c.tokens {
		if ts.rec == nil || ts.lost || ts.key != key {
			continue
		}
		switch {
		case now != nil && now.token == tok:
			ts.rec = now
		case tok == ks.holder || contains(lostTokens, tok):
			// The key's record, gone, or one the lost writes carried:
			// tokens it had taken over from earlier, on the replica,
			// lost their record before, not now.
			ts.rec, ts.lost, ts.lostBy = nil, true, ex
		}
	}
	if cur := ks.complete; cur != nil && (now == nil || now.status != idempotency.StatusComplete || now.token != cur.token) {
		// A record expired by every clock, or taken over after its
		// expiry, had ended before the failover: the failover lost none
		// of it.
		ts := c.tokens[cur.token]
		ended := !c.w.s.now.Before(cur.expiryHi) || (ts != nil && !ts.expiredAt.IsZero())
		switch {
		case ended:
		case ex.limit == "" && cur.replayed:
			// With WaitReplicas, a duplicate is answered only from a
			// record the replica has (docs/redis.md).
			c.violate(invReplay, noExcuse, key, "a failover lost the COMPLETED record of token %s, which a duplicate had been given", c.name(cur.token))
			cur.lostBy = ex
		case ex.limit == "":
			// Lost before anyone but its writer, who was not told it was
			// made, could see it: as if its Complete had failed.
			ks.complete, ks.previous = nil, nil
		default:
			cur.lostBy = ex
		}
	}
	ks.holder = ""
	if now != nil {
		ks.holder = now.token
	}
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
