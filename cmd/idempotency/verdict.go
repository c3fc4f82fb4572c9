package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/handler"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// says puts into words what a delivery meets, as the library's engine
// answered it (handler.Delivery): whether it runs the handler, and the
// error it gets, whose type is the engine's own; what comes once an
// invocation holding the key has ended, and what an event that does not
// decode into the handler's type meets instead, when those differ. What
// the record is (the why of the answer) adds to the words, never to the
// answer.
func says(d *handler.Delivery, now time.Time) string {
	s := saysNow(d, now)
	if d.Then != nil {
		s += "; then " + saysThen(d.Then, now)
	}
	if u := d.Undecodable; u != nil {
		s += fmt.Sprintf("; unless the event does not decode into the handler's input type, which the command cannot see: then a delivery gets %T, and the handler does not run", u.Err)
	}
	return s
}

func saysNow(d *handler.Delivery, now time.Time) string {
	rec := d.Record
	switch {
	case d.Runs && d.Outcome == "":
		return "idempotency is off for the function (" + handler.DisabledEnv + "): a delivery runs the handler, and keeps no record"
	case d.Runs && d.Outcome == idempotency.OutcomeNoKey:
		return "the event has no key: a delivery runs the handler without idempotency, and keeps no record"
	case d.Runs && rec == nil:
		return "a delivery runs the handler"
	case d.Runs && !rec.Expiry.IsZero() && !now.Before(rec.Expiry):
		return "expired: a delivery runs the handler, as if there were no record"
	case d.Runs && rec.Status == idempotency.StatusInProgress:
		return "lease ended, its invocation is gone: a delivery takes the key over and runs the handler"
	case d.Runs:
		return "a delivery runs the handler"
	case d.Err == nil:
		return "completed: a delivery gets the stored response"
	}
	if e, ok := errors.AsType[*idempotency.CorruptedRecordError](d.Err); ok && d.Corrupted != nil {
		return fmt.Sprintf("the record cannot be read (%s): a delivery gets %T, and the handler does not run until the record is repaired, deleted (forget --force) or expires", e.Reason, d.Err)
	}
	if e, ok := errors.AsType[*idempotency.PayloadConflictError](d.Err); ok {
		return fmt.Sprintf("conflict: a delivery gets %T: the record's payload hash is %s, the event's %s", d.Err, orNone(printable(e.StoredHash)), orNone(e.EventHash))
	}
	if e, ok := errors.AsType[*idempotency.InProgressError](d.Err); ok {
		return fmt.Sprintf("an invocation holds the key: a delivery gets %T until %s", d.Err, when(e.LeaseEnd, now))
	}
	if e, ok := errors.AsType[*idempotency.AbandonedError](d.Err); ok {
		return fmt.Sprintf("abandoned: its invocation ended without completing (deadline %s); a delivery gets %T until the record expires, %s", when(e.Deadline, now), d.Err, when(e.Expiry, now))
	}
	if _, ok := errors.AsType[*idempotency.UncertainError](d.Err); ok {
		const unless = " (unless the function's code reconciles it, with WithReconcile, which the command cannot see)"
		switch {
		case rec != nil && rec.Status == idempotency.StatusInProgress:
			return fmt.Sprintf("abandoned: its invocation ended without completing; a delivery marks the record UNCERTAIN and gets %T%s", d.Err, unless)
		case rec != nil && now.Before(rec.LeaseEnd):
			return fmt.Sprintf("uncertain, and an invocation is reconciling it until %s: a delivery gets %T", when(rec.LeaseEnd, now), d.Err)
		}
		return fmt.Sprintf("uncertain: a delivery gets %T until it is resolved or expires%s", d.Err, unless)
	}
	if _, ok := errors.AsType[*idempotency.ResponseNotStoredError](d.Err); ok {
		return fmt.Sprintf("completed, response not stored: a delivery gets %T", d.Err)
	}
	return fmt.Sprintf("a delivery gets %T: %v", d.Err, d.Err)
}

// saysThen puts into words what a delivery meets once the invocation
// holding the key has ended (handler.Delivery.Then).
func saysThen(d *handler.Delivery, now time.Time) string {
	switch {
	case d.Runs:
		return "the next delivery takes the key over and runs the handler"
	case d.Err == nil:
		return "a delivery gets the stored response"
	}
	if e, ok := errors.AsType[*idempotency.AbandonedError](d.Err); ok {
		return fmt.Sprintf("the key is abandoned (its record holds it past its invocation's deadline: an abandon policy of block): a delivery gets %T until the record expires, %s", d.Err, when(e.Expiry, now))
	}
	if _, ok := errors.AsType[*idempotency.UncertainError](d.Err); ok {
		return fmt.Sprintf("the key is abandoned (an abandon policy of uncertain): a delivery marks the record UNCERTAIN and gets %T", d.Err)
	}
	return fmt.Sprintf("a delivery gets %T", d.Err)
}

// verdictView is what a delivery meets, in inspect's -json output.
type verdictView struct {
	// RunsHandler reports that a delivery runs the handler.
	RunsHandler bool `json:"runs_handler"`
	// Outcome is what the function's observer would be told
	// (idempotency.Outcome): when the handler runs, the outcome of its
	// success; "" when idempotency is off.
	Outcome string `json:"outcome"`
	// Error is the Go type of the error a delivery gets, "" for none.
	Error string `json:"error,omitempty"`
	// LeaseEnd is the lease end that the error gives (InProgressError,
	// UncertainError): when to retry.
	LeaseEnd string `json:"lease_end,omitempty"`
	Says     string `json:"says"`
	// Then is what a delivery meets once the invocation holding the key
	// has ended, from At on.
	Then *verdictView `json:"then,omitempty"`
	At   string       `json:"at,omitempty"`
	// Undecodable is what a delivery meets instead when the event does
	// not decode into the handler's input type, which the command cannot
	// see; only when that changes the answer.
	Undecodable *verdictView `json:"undecodable,omitempty"`
}

func verdict(d *handler.Delivery, now time.Time) verdictView {
	v := verdictView{RunsHandler: d.Runs, Outcome: string(d.Outcome), Says: says(d, now), At: timestamp(d.At)}
	if d.Err != nil {
		v.Error = fmt.Sprintf("%T", d.Err)
	}
	if e, ok := errors.AsType[*idempotency.InProgressError](d.Err); ok {
		v.LeaseEnd = timestamp(e.LeaseEnd)
	}
	if e, ok := errors.AsType[*idempotency.UncertainError](d.Err); ok {
		v.LeaseEnd = timestamp(e.LeaseEnd)
	}
	if d.Then != nil {
		then := verdict(d.Then, now)
		then.Says = saysThen(d.Then, now)
		v.Then = &then
	}
	if d.Undecodable != nil {
		u := verdict(d.Undecodable, now)
		v.Undecodable = &u
	}
	return v
}
