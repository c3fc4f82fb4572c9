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
// error it gets, whose type is the engine's own. What the record is (the
// why of the answer) adds to the words, never to the answer.
func says(d *handler.Delivery, now time.Time) string {
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
	if e, ok := errors.AsType[*idempotency.PayloadConflictError](d.Err); ok {
		return fmt.Sprintf("conflict: a delivery gets %T: the record's payload hash is %s, the event's %s", d.Err, orNone(printable(e.StoredHash)), orNone(e.EventHash))
	}
	if e, ok := errors.AsType[*idempotency.InProgressError](d.Err); ok {
		return fmt.Sprintf("an invocation holds the key: a delivery gets %T until the lease ends, %s", d.Err, when(e.LeaseEnd, now))
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

// verdictView is what a delivery meets, in inspect's -json output.
type verdictView struct {
	// RunsHandler reports that a delivery runs the handler.
	RunsHandler bool `json:"runs_handler"`
	// Outcome is what the function's observer would be told
	// (idempotency.Outcome); "" when idempotency is off.
	Outcome string `json:"outcome"`
	// Error is the Go type of the error a delivery gets, "" for none.
	Error string `json:"error,omitempty"`
	Says  string `json:"says"`
}

func verdict(d *handler.Delivery, now time.Time) verdictView {
	v := verdictView{RunsHandler: d.Runs, Outcome: string(d.Outcome), Says: says(d, now)}
	if d.Err != nil {
		v.Error = fmt.Sprintf("%T", d.Err)
	}
	return v
}
