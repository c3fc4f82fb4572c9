package idempotency

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// lease is what one invocation holds while it owns a key.
//
// The record is INPROGRESS as Acquire (or UNCERTAIN as Reclaim) wrote it,
// then becomes in place the COMPLETED record given to Complete, or the
// UNCERTAIN one given to MarkUncertain: a Store keeps no *Record it is
// given (see [Store]), so one record serves every write.
type lease struct {
	rec Record
	end time.Time // rec's lease end, which the final record does not carry
}

// leaseEnd is the invocation's deadline (and WithLeaseBeyondDeadline's
// time past it): past it Lambda has given up on the invocation, so its
// key may be taken over.
func (inv *invocation) leaseEnd() time.Time {
	if d, ok := inv.ctx.Deadline(); ok {
		return d.Add(inv.leaseBeyond)
	}
	if inv.leaseWarned.CompareAndSwap(false, true) {
		inv.log().WarnContext(inv.ctx, "idempotency: the context has no deadline; leases last the WithLease duration", "lease", inv.leaseWithoutDeadline)
	}
	return inv.now.Add(inv.leaseWithoutDeadline)
}

// setLease sets the lease of rec, a new INPROGRESS record of an
// invocation whose deadline is deadline: under AbandonRetry the lease ends
// then, else it lasts until the record expires and the record keeps the
// deadline, so that a duplicate can tell when its holder is gone.
func (e *engine) setLease(rec *Record, deadline time.Time) {
	if e.abandon == AbandonRetry {
		rec.LeaseEnd, rec.Deadline = deadline, time.Time{}
		return
	}
	rec.LeaseEnd, rec.Deadline = rec.Expiry, deadline
}

// holderDeadline is when the invocation holding the INPROGRESS record rec
// is expected to end: its deadline when the record keeps one, else its
// lease end.
func holderDeadline(rec *Record) time.Time {
	if !rec.Deadline.IsZero() {
		return rec.Deadline
	}
	return rec.LeaseEnd
}

// holderGone reports whether the INPROGRESS record rec, live at now, is
// held by an invocation that has ended: its deadline, which the record
// keeps under AbandonBlock and AbandonUncertain, and AbandonGrace have
// passed.
func holderGone(rec *Record, now time.Time) bool {
	return !rec.Deadline.IsZero() && !now.Before(rec.Deadline.Add(AbandonGrace))
}

// newLeaseToken returns a new lease token, unique to the invocation: 32
// lowercase hex digits of crypto/rand, the form the records hold.
// Complete and Release are conditioned on it, so that an invocation whose
// lease ended cannot touch the record of the one that took the key over,
// and Acquire takes a live INPROGRESS record carrying its own token for an
// earlier try of the same request.
func newLeaseToken() string {
	var b [16]byte
	rand.Read(b[:]) // never fails: since Go 1.24 it crashes the program instead
	return hex.EncodeToString(b[:])
}
