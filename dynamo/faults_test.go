package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/faultproxy"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// faultSteps are the requests of the middleware's paths that a fault can
// hit, and how each path is driven and checked.
var faultSteps = []struct {
	name string
	req  faultproxy.Rule
	// dupe: the order is charged once before the fault, which then hits
	// the duplicate's requests.
	dupe bool
	// declineFirst: the handler fails once, so that the record is
	// released, and the order is charged on the caller's retry.
	declineFirst bool
	// servers, when not "", is the one server the step happens on:
	// dynalite returns no item with a failed condition, so a duplicate
	// reads the record with GetItem there.
	servers string
}{
	{name: "acquire", req: acquirePut},
	{name: "complete", req: completePut},
	{name: "release", req: releaseDel, declineFirst: true},
	{name: "replay", req: acquirePut, dupe: true},
	{name: "replay-get", req: getItemReq, dupe: true, servers: "dynalite"},
}

func faultRule(base faultproxy.Rule, f faultproxy.Fault, times int) faultproxy.Rule {
	base.Fault, base.Times = f, times
	if f == faultproxy.Latency {
		base.Delay = 20 * time.Millisecond
	}
	return base
}

// TestFaultsRetried injects each fault into each request of the
// middleware once, and twice (two of the SDK's three attempts): the SDK
// retries, and the library carries on as if nothing happened. A lost reply
// is the interesting case: the retried conditional put meets the
// invocation's own IN_PROGRESS record (acquire) or COMPLETED record
// (complete), and the retried delete finds nothing (release); each must
// count as done, not as someone else's record.
func TestFaultsRetried(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			w := newFaultWorld(t, srv)
			h := w.wrap()
			for _, step := range faultSteps {
				if step.servers != "" && step.servers != srv.name {
					continue
				}
				for _, fault := range faultproxy.HTTPFaults {
					for _, times := range []int{1, 2} {
						if fault == faultproxy.Latency && times > 1 {
							continue // a slow reply is not retried: there is no second attempt to delay
						}
						t.Run(fmt.Sprintf("%s/%v/x%d", step.name, fault, times), func(t *testing.T) {
							w.t = t
							id := fmt.Sprintf("%s-%v-%d", step.name, fault, times)
							if step.dupe {
								got, err := w.invoke(h, id)
								w.wantCharged("first call", id, got, err)
							}
							if step.declineFirst {
								w.fail[id] = 1
							}
							w.proxy.Set(faultRule(step.req, fault, times))
							w.proxy.ResetCounts()
							got, err := w.invoke(h, id)
							injected := w.proxy.Counts().InjectedFault(fault)
							w.proxy.Set()
							if injected != times {
								t.Fatalf("%d faults injected, want %d: the step sent other requests than expected", injected, times)
							}
							if step.declineFirst {
								if !errors.Is(err, errCardDeclined) {
									t.Fatalf("declined call: err = %v, want the handler's own error", err)
								}
								w.wantStatus(id, "")
								got, err = w.invoke(h, id)
							}
							w.wantCharged("call under fault", id, got, err)
							w.wantStatus(id, idempotency.StatusComplete)
							got, err = w.invoke(h, id)
							w.wantCharged("duplicate", id, got, err)
							w.wantEffects(id, 1)
							if n := w.logs.total(); n != 0 {
								t.Errorf("%d errors logged, want none: %v", n, w.logs.n)
							}
						})
					}
				}
			}
		})
	}
}

// TestFaultsBeyondRetries breaks every attempt the SDK makes (three) at
// one request. What the caller sees then depends on whether the server
// applied the request, and each outcome is one the caller can act on
// without charging twice. A refused COMPLETED write is tried again by the
// middleware while the lease leaves time (five times in all), so three
// refusals are overcome; only a write refused on all fifteen attempts
// leaves the record IN_PROGRESS, which the library logs, and once the lease
// has ended a retry runs the handler again.
func TestFaultsBeyondRetries(t *testing.T) {
	isPersistence := func(err error) bool { return errors.As(err, new(*idempotency.PersistenceError)) }
	isDeclined := func(err error) bool { return errors.Is(err, errCardDeclined) }
	tests := []struct {
		name    string
		req     faultproxy.Rule
		fault   faultproxy.Fault
		times   int // requests broken: the SDK's three attempts, or more
		decline bool
		// what the call under faults gets
		wantErr func(error) bool // nil: the charge
		// the record after it ("" gone)
		wantStatus idempotency.Status
		// the effects once a retry after the lease has run
		wantEffects int
		wantLogged  int
	}{
		{"acquire refused", acquirePut, faultproxy.Throttling, 3, false, isPersistence, "", 1, 0},
		{"acquire applied, replies lost", acquirePut, faultproxy.ReplyLost, 3, false, isPersistence, idempotency.StatusInProgress, 1, 0},
		{"complete applied, replies lost", completePut, faultproxy.ReplyLost, 3, false, nil, idempotency.StatusComplete, 1, 0},
		{"complete refused, then stored by the middleware's retry", completePut, faultproxy.InternalServerError, 3, false, nil, idempotency.StatusComplete, 1, 0},
		{"complete refused on every attempt", completePut, faultproxy.InternalServerError, 15, false, nil, idempotency.StatusInProgress, 2, 1},
		{"release refused", releaseDel, faultproxy.ProvisionedThroughputExceeded, 3, true, isDeclined, idempotency.StatusInProgress, 1, 1},
		{"release applied, replies lost", releaseDel, faultproxy.ReplyLost, 3, true, isDeclined, "", 1, 1},
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			w := newFaultWorld(t, srv)
			h := w.wrap()
			for i, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					w.t = t
					w.logs.reset()
					id := fmt.Sprintf("beyond-%d", i)
					if tt.decline {
						w.fail[id] = 1
					}
					w.proxy.Set(faultRule(tt.req, tt.fault, tt.times))
					got, err := w.invoke(h, id)
					w.proxy.Set()
					if tt.wantErr == nil {
						w.wantCharged("call under faults", id, got, err)
					} else if !tt.wantErr(err) {
						t.Fatalf("call under faults: err = %v, want another", err)
					}
					w.wantStatus(id, tt.wantStatus)
					if tt.wantStatus == idempotency.StatusInProgress {
						if _, err := w.invoke(h, id); !errors.As(err, new(*idempotency.InProgressError)) {
							t.Errorf("duplicate within the lease: err = %v, want an InProgressError", err)
						}
						w.advance(faultLease + time.Second)
					}
					got, err = w.invoke(h, id)
					w.wantCharged("retry", id, got, err)
					w.wantEffects(id, tt.wantEffects)
					if n := w.logs.total(); n != tt.wantLogged {
						t.Errorf("%d errors logged, want %d: %v", n, tt.wantLogged, w.logs.n)
					}
				})
			}
		})
	}
}

// TestDeadlineDuringComplete: the handler succeeds just before the
// invocation's deadline, and the deadline passes while the COMPLETED write
// is on its way (the proxy holds it). The write must still be made: the
// effect has happened, and a write cancelled with the context would leave
// the key IN_PROGRESS with a lease that has already ended, so the next
// duplicate would run the handler again.
func TestDeadlineDuringComplete(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			w := newFaultWorld(t, srv)
			h := idempotency.Wrap(w.store, w.handler,
				idempotency.WithEventKey("id"),
				idempotency.WithKeyPrefix(faultPrefix),
				idempotency.WithLogger(slog.New(w.logs)))
			// The deadline leaves the Acquire a second, which a loaded CI
			// machine's moto needs (300 ms once ran out before the handler
			// ran); the COMPLETED write is held past it.
			w.proxy.Set(faultproxy.Rule{Fault: faultproxy.Latency, Op: completePut.Op, BodyContains: completePut.BodyContains, Times: 1, Delay: 1500 * time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			payload, _ := json.Marshal(faultEvent{ID: "late"})
			out, err := h.Invoke(ctx, payload)
			if err != nil {
				t.Fatalf("call: %v, want the charge", err)
			}
			if !strings.Contains(string(out), `"late"`) {
				t.Fatalf("call answered %s, want the charge", out)
			}
			w.proxy.Set()
			w.wantStatus("late", idempotency.StatusComplete)
			dup, err := h.Invoke(context.Background(), payload)
			if err != nil || string(dup) != string(out) {
				t.Errorf("duplicate after the deadline: (%s, %v), want the replay %s", dup, err, out)
			}
			w.wantEffects("late", 1)
		})
	}
}
