package faultworld

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Step is a request of one of the middleware's paths that a fault can
// hit, and how the path is driven and checked.
type Step struct {
	Name string
	// Rule selects the step's request; the fault and its count are set
	// by the test.
	Rule faultproxy.Rule
	// Dupe: the order is charged once before the fault, which then hits
	// the duplicate's requests.
	Dupe bool
	// DeclineFirst: the handler fails once, so that the record is
	// released, and the order is charged on the caller's retry.
	DeclineFirst bool
	// UncertainFirst: the handler times out once, so that the record is
	// held UNCERTAIN, and the next call reclaims it and charges the
	// order. The fault hits the reclaiming call, or the first call (its
	// UNCERTAIN write) when HitsUncertainWrite is set.
	UncertainFirst     bool
	HitsUncertainWrite bool
	// Prepare, when set, runs just before the fault is set.
	Prepare func()
}

// TestRetried injects each fault into each step's request once per count
// in times: the client retries, and the library carries on as if nothing
// happened. A lost reply is the interesting case: the retried write meets
// the invocation's own record, or finds nothing, and each must count as
// done, not as someone else's record. h is [World.Wrap]'s middleware.
func (w *World) TestRetried(t *testing.T, h *idempotency.Handler, steps []Step, faults []faultproxy.Fault, times []int) {
	for _, step := range steps {
		for _, fault := range faults {
			for _, n := range times {
				if fault == faultproxy.Latency && n > 1 {
					continue // a slow reply is not retried: there is no second attempt to delay
				}
				t.Run(fmt.Sprintf("%s/%v/x%d", step.Name, fault, n), func(t *testing.T) {
					w.T = t
					w.Logs.Reset()
					w.retried(h, step, fault, n)
				})
			}
		}
	}
}

func (w *World) retried(h *idempotency.Handler, step Step, fault faultproxy.Fault, times int) {
	t := w.T
	id := fmt.Sprintf("%s-%v-%d", step.Name, fault, times)
	if step.Dupe {
		got, err := w.Invoke(h, id)
		w.WantCharged("first call", id, got, err)
	}
	if step.DeclineFirst {
		w.Fail(id, 1)
	}
	if step.UncertainFirst {
		w.Uncertain(id, 1)
		if !step.HitsUncertainWrite {
			w.wantUncertain(h, id)
		}
	}
	if step.Prepare != nil {
		step.Prepare()
	}
	w.Proxies.Set(Rule(step.Rule, fault, times))
	w.Proxies.ResetCounts()
	got, err := w.Invoke(h, id)
	injected := w.Proxies.Injected(fault)
	w.Proxies.Set()
	if injected != times {
		t.Fatalf("%d faults injected, want %d: the step sent other requests than expected", injected, times)
	}
	switch {
	case step.DeclineFirst:
		if !errors.Is(err, ErrCardDeclined) {
			t.Fatalf("declined call: err = %v, want the handler's own error", err)
		}
		w.WantStatus(id, "")
		got, err = w.Invoke(h, id)
	case step.UncertainFirst && step.HitsUncertainWrite:
		if !errors.Is(err, ErrTimedOut) {
			t.Fatalf("uncertain call: err = %v, want the handler's own error", err)
		}
		w.WantStatus(id, idempotency.StatusUncertain)
		got, err = w.Invoke(h, id)
	}
	w.WantCharged("call under fault", id, got, err)
	w.WantStatus(id, idempotency.StatusComplete)
	got, err = w.Invoke(h, id)
	w.WantCharged("duplicate", id, got, err)
	w.WantEffects(id, 1)
	if logged := w.Logs.At(slog.LevelError); len(logged) != 0 {
		t.Errorf("%d errors logged, want none: %v", len(logged), logged)
	}
}

// wantUncertain makes the call of id whose handler times out, and fails
// unless it leaves the record UNCERTAIN.
func (w *World) wantUncertain(h *idempotency.Handler, id string) {
	w.T.Helper()
	if _, err := w.Invoke(h, id); !errors.Is(err, ErrTimedOut) {
		w.T.Fatalf("uncertain call: err = %v, want the handler's own error", err)
	}
	w.WantStatus(id, idempotency.StatusUncertain)
}

// Beyond is a case of [World.TestBeyondRetries]: a fault on every attempt
// the client makes at one request, or more.
type Beyond struct {
	Name  string
	Rule  faultproxy.Rule
	Fault faultproxy.Fault
	Times int // requests broken
	// Decline: the handler fails once. Uncertain: the order's first call
	// times out; the call under faults reclaims it.
	Decline, Uncertain bool
	// WantErr is what the call under faults gets; nil: the charge.
	WantErr func(error) bool
	// WantStatus is the record after it ("": gone).
	WantStatus idempotency.Status
	// Held: the record still holds a lease, which turns a duplicate away
	// until it ends, with an *InProgressError, or an *UncertainError for
	// an UNCERTAIN record being reconciled.
	Held bool
	// WantEffects are the charges once a retry after the lease has run;
	// WantLogged, the ERROR records of the call under faults and the
	// retry.
	WantEffects, WantLogged int
}

// Paths are a store's requests on the middleware's three write paths.
type Paths struct {
	// Acquire, Complete and Release select each path's request; the
	// Fault of each is one that refuses it before the server sees it.
	Acquire, Complete, Release faultproxy.Rule
	// Attempts is how many times the store's client sends one request.
	Attempts int
}

// completeTries is how many times the middleware tries a COMPLETED write
// while the lease leaves time.
const completeTries = 5

// BeyondCases are the cases of [World.TestBeyondRetries] on the three
// write paths: each request refused, or applied with its replies lost, on
// all of the client's attempts; a COMPLETED write refused on every try of
// the middleware too.
func BeyondCases(p Paths) []Beyond {
	lost := faultproxy.ReplyLost
	return []Beyond{
		{Name: "acquire refused", Rule: p.Acquire, Fault: p.Acquire.Fault, Times: p.Attempts,
			WantErr: IsPersistence, WantEffects: 1},
		{Name: "acquire applied, replies lost", Rule: p.Acquire, Fault: lost, Times: p.Attempts,
			WantErr: IsPersistence, WantStatus: idempotency.StatusInProgress, Held: true, WantEffects: 1},
		{Name: "complete applied, replies lost", Rule: p.Complete, Fault: lost, Times: p.Attempts,
			WantStatus: idempotency.StatusComplete, WantEffects: 1},
		{Name: "complete refused, then stored by the middleware's retry", Rule: p.Complete, Fault: p.Complete.Fault, Times: p.Attempts,
			WantStatus: idempotency.StatusComplete, WantEffects: 1},
		{Name: "complete refused on every attempt", Rule: p.Complete, Fault: p.Complete.Fault, Times: completeTries * p.Attempts,
			WantStatus: idempotency.StatusInProgress, Held: true, WantEffects: 2, WantLogged: 1},
		{Name: "release refused", Rule: p.Release, Fault: p.Release.Fault, Times: p.Attempts, Decline: true,
			WantErr: IsDeclined, WantStatus: idempotency.StatusInProgress, Held: true, WantEffects: 1, WantLogged: 1},
		{Name: "release applied, replies lost", Rule: p.Release, Fault: lost, Times: p.Attempts, Decline: true,
			WantErr: IsDeclined, WantEffects: 1, WantLogged: 1},
	}
}

// TestBeyondRetries runs each case: what the caller sees then depends on
// whether the server applied the request, and each outcome must be one
// the caller can act on without charging twice. A COMPLETED write refused
// on the client's attempts is overcome by the middleware's next try; only
// one refused on every try leaves the record IN_PROGRESS, which the
// library logs, and once the lease has ended a retry runs the handler
// again. h is [World.Wrap]'s
// middleware.
func (w *World) TestBeyondRetries(t *testing.T, h *idempotency.Handler, cases []Beyond) {
	for i, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			w.T = t
			w.CatchUp()
			id := fmt.Sprintf("beyond-%d", i)
			if tt.Decline {
				w.Fail(id, 1)
			}
			if tt.Uncertain {
				w.Uncertain(id, 1)
				w.wantUncertain(h, id)
			}
			w.Logs.Reset()
			w.Proxies.Set(Rule(tt.Rule, tt.Fault, tt.Times))
			got, err := w.Invoke(h, id)
			w.Proxies.Set()
			if tt.WantErr == nil {
				w.WantCharged("call under faults", id, got, err)
			} else if !tt.WantErr(err) {
				t.Fatalf("call under faults: err = %v, want another", err)
			}
			w.WantStatus(id, tt.WantStatus)
			if tt.Held {
				_, err := w.Invoke(h, id)
				var ue *idempotency.UncertainError
				switch {
				case tt.WantStatus == idempotency.StatusUncertain:
					if !errors.As(err, &ue) || ue.LeaseEnd.IsZero() {
						t.Errorf("duplicate within the lease: err = %v, want an *UncertainError being reconciled", err)
					}
				case !errors.As(err, new(*idempotency.InProgressError)):
					t.Errorf("duplicate within the lease: err = %v, want an *InProgressError", err)
				}
				w.Advance(Lease + time.Second)
			}
			got, err = w.Invoke(h, id)
			w.WantCharged("retry", id, got, err)
			w.WantEffects(id, tt.WantEffects)
			if logged := w.Logs.At(slog.LevelError); len(logged) != tt.WantLogged {
				t.Errorf("%d errors logged, want %d: %v", len(logged), tt.WantLogged, logged)
			}
		})
	}
}

// IsPersistence reports whether err is an *idempotency.PersistenceError.
func IsPersistence(err error) bool { return errors.As(err, new(*idempotency.PersistenceError)) }

// IsDeclined reports whether err is the handler's [ErrCardDeclined].
func IsDeclined(err error) bool { return errors.Is(err, ErrCardDeclined) }
