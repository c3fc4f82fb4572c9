package sim

import (
	"fmt"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file judges the effects the downstream made (I1), or the
// transactions that committed them with the record (I6): at most one per
// key and record life, but after a fenced takeover, which the checker
// accepts only when the spec allows the takeover and an injected fault
// explains why the earlier holder did not complete.

// effect is told of an effect the downstream made for key, or of a
// committed transaction that held it.
func (c *checker) effect(inv *invocation, key string, n, amount int) {
	c.stats.Effects++
	invariant := invAtMostOnce
	if c.w.cfg.invoker {
		invariant = invExactlyOnce
	}
	ks := c.key(key)
	this := &effectRec{inv: inv, token: inv.token, n: n, at: c.w.s.now}
	defer func() { ks.lastEffect = this }()
	if inv.token == "" {
		c.violate(invariant, noExcuse, key, "%v made effect %d without holding the key", inv.id, n)
		return
	}
	prev := ks.lastEffect
	if prev == nil || prev.inv == inv {
		return
	}
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
	h, x := holder.inv, taker.inv
	ts := c.tokens[holder.token]
	tB := x.acquiredAt
	ks := c.key(key)
	what := fmt.Sprintf("effect %d by %v (token %s, taken at %s) beside effect %d by %v (token %s, taken at %s)",
		taker.n, x.id, c.name(x.token), c.w.at(tB), holder.n, h.id, c.name(holder.token), c.w.at(h.acquiredAt))
	switch {
	case ts == nil:
		c.violate(invariant, noExcuse, key, "%s: the earlier token is unknown", what)
	case ts.lost:
		c.violate(invariant, ts.lostBy, key, "%s: the earlier record was lost in a failover", what)
	case ts.released:
		c.violate(invariant, noExcuse, key, "%s: the earlier record was released after its effect", what)
	case ts.rec == nil:
		c.violate(invariant, ks.lostBy, key, "%s: the earlier record is gone", what)
	case !clockOf(x, tB).Before(ts.expiryLo) || !tB.Before(ts.expiryLo) || (!ts.expiredAt.IsZero() && !ts.expiredAt.After(tB)):
		// The record had expired, by the taker's clock or by the world's
		// (a server's TTL deletes by its own), or an invocation whose
		// clock said so had taken it over since.
		c.stats.RerunsAfterExpiry++
	case c.w.cfg.invoker && invariant == invExactlyOnce:
		// A committed effect comes with its COMPLETED record: two in one
		// record's life are two commits.
		c.violate(invariant, noExcuse, key, "%s: two committed effects in one record's life (until %s)", what, c.w.at(ts.expiryLo))
	case c.w.cfg.policy != idempotency.AbandonRetry:
		c.violate(invariant, noExcuse, key, "%s: under Abandon%s the key is never taken over before the record expires (not before %s)",
			what, policyName(c.w.cfg.policy), c.w.at(ts.expiryLo))
	case ts.rec.status != idempotency.StatusInProgress:
		c.violate(invariant, ks.lostBy, key, "%s: the earlier record is %s until %s", what, ts.rec.status, c.w.at(ts.rec.expiry))
	case ts.takenWhileRunning.limit != "":
		x.limit, h.limit = ts.takenWhileRunning, ts.takenWhileRunning
		c.violate(invariant, ts.takenWhileRunning, key, "%s: taken over while %v still ran, before its lease ended at %s", what, h.id, c.w.at(ts.holderEnd))
	case !h.ended || h.endedAt.After(tB):
		c.violate(invariant, noExcuse, key, "%s: taken over while %v still ran (its lease ends at %s)", what, h.id, c.w.at(ts.holderEnd))
	default:
		// Fenced: the lease had ended (judged when the takeover was
		// written) and the holder was gone. Why had it not completed?
		if why := c.gone(h, holder.at); why != "" {
			c.stats.FencedTakeovers++
			return
		}
		c.violate(invariant, noExcuse, key, "%s: %v ended (%s) without completing its record, and no injected fault explains why", what, h.id, h.outcome)
	}
}
