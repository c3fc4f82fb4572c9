package redisstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/faultproxy"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// faultSteps are the commands of the middleware's paths that a fault can
// hit, and how each path is driven and checked.
var faultSteps = []struct {
	name string
	rule faultproxy.Rule
	// dupe: the order is charged once before the fault, which then hits
	// the duplicate's command.
	dupe bool
	// declineFirst: the handler fails once, so that the record is
	// released, and the order is charged on the caller's retry.
	declineFirst bool
	// uncertainFirst: the handler times out once, so that the record is
	// held UNCERTAIN, and the next call reclaims it and charges the order.
	// The fault hits the first call when the step's script is complete
	// (the UNCERTAIN write), else the reclaiming call.
	uncertainFirst bool
	// flush: the servers forget the scripts first, so that the command hit
	// is EVAL, after EVALSHA's NOSCRIPT.
	flush bool
}{
	{name: "acquire", rule: faultproxy.Rule{Script: acquireScript.Hash()}},
	{name: "acquire-eval", rule: faultproxy.Rule{Op: "EVAL", Script: acquireScript.Hash()}, flush: true},
	{name: "complete", rule: faultproxy.Rule{Script: completeScript.Hash()}},
	{name: "release", rule: faultproxy.Rule{Script: releaseScript.Hash()}, declineFirst: true},
	{name: "replay", rule: faultproxy.Rule{Script: acquireScript.Hash()}, dupe: true},
	{name: "hold", rule: faultproxy.Rule{Script: completeScript.Hash()}, uncertainFirst: true},
	{name: "reclaim", rule: faultproxy.Rule{Script: reclaimScript.Hash()}, uncertainFirst: true},
}

func faultRule(base faultproxy.Rule, f faultproxy.Fault, times int) faultproxy.Rule {
	base.Fault, base.Times = f, times
	if f == faultproxy.Latency {
		base.Delay = 20 * time.Millisecond
	}
	return base
}

// TestFaultsRetried injects each fault into each command of the
// middleware once, and on all of go-redis's attempts but the last: the
// client retries, and the store carries on as if nothing happened. A lost
// reply is the interesting case: the retried script meets the
// invocation's own IN_PROGRESS record (acquire), its own COMPLETED or
// UNCERTAIN record (complete), nothing (release), or its own new token
// (reclaim); each must count as done, not as someone else's record.
func TestFaultsRetried(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			w := newFaultWorld(t, srv)
			h := w.wrap()
			for _, step := range faultSteps {
				for _, fault := range faultproxy.RESPFaults {
					for _, times := range []int{1, attempts - 1} {
						if fault == faultproxy.Latency && times > 1 {
							continue // a slow reply is not retried: there is no second attempt to delay
						}
						t.Run(fmt.Sprintf("%s/%v/x%d", step.name, fault, times), func(t *testing.T) {
							w.t = t
							w.logs.reset()
							id := fmt.Sprintf("%s-%v-%d", step.name, fault, times)
							if step.dupe {
								got, err := w.invoke(h, id)
								w.wantCharged("first call", id, got, err)
							}
							if step.declineFirst {
								w.fail[id] = 1
							}
							if step.uncertainFirst {
								w.uncertain[id] = 1
								if step.rule.Script != completeScript.Hash() {
									if _, err := w.invoke(h, id); !errors.Is(err, errTimedOut) {
										t.Fatalf("uncertain call: err = %v, want the handler's own error", err)
									}
									w.wantStatus(id, idempotency.StatusUncertain)
								}
							}
							if step.flush {
								w.flushScripts()
							}
							w.proxies.Set(faultRule(step.rule, fault, times))
							w.proxies.ResetCounts()
							got, err := w.invoke(h, id)
							injected := w.proxies.injected(fault)
							w.proxies.Set()
							if injected != times {
								t.Fatalf("%d faults injected, want %d: the step sent other commands than expected", injected, times)
							}
							switch {
							case step.declineFirst:
								if !errors.Is(err, errCardDeclined) {
									t.Fatalf("declined call: err = %v, want the handler's own error", err)
								}
								w.wantStatus(id, "")
								got, err = w.invoke(h, id)
							case step.uncertainFirst && step.rule.Script == completeScript.Hash():
								if !errors.Is(err, errTimedOut) {
									t.Fatalf("uncertain call: err = %v, want the handler's own error", err)
								}
								w.wantStatus(id, idempotency.StatusUncertain)
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

func isPersistence(err error) bool {
	_, ok := errors.AsType[*idempotency.PersistenceError](err)
	return ok
}

// TestFaultsBeyondRetries breaks every attempt go-redis makes at one
// command. What the caller sees then depends on whether the server ran the
// script, and each outcome is one the caller can act on without charging
// twice. A COMPLETED write that fails is tried again by the middleware
// while the lease leaves time (five calls in all), so one call's attempts
// are overcome; only a write broken on every attempt of all five leaves
// the record IN_PROGRESS, which the library logs, and once the lease has
// ended a retry runs the handler again.
func TestFaultsBeyondRetries(t *testing.T) {
	acquire := faultproxy.Rule{Script: acquireScript.Hash()}
	complete := faultproxy.Rule{Script: completeScript.Hash()}
	release := faultproxy.Rule{Script: releaseScript.Hash()}
	reclaim := faultproxy.Rule{Script: reclaimScript.Hash()}
	tests := []struct {
		name      string
		rule      faultproxy.Rule
		fault     faultproxy.Fault
		times     int
		decline   bool
		uncertain bool // the order's first call times out; the call under faults reclaims it
		// what the call under faults gets: nil is the charge
		wantErr func(error) bool
		// the record after it ("" gone)
		wantStatus idempotency.Status
		// held: the record still holds a lease, which turns away a
		// duplicate until it ends
		held bool
		// the effects once a retry after the lease has run
		wantEffects int
		wantLogged  int
	}{
		{"acquire refused", acquire, faultproxy.ResetBeforeServer, attempts, false, false, isPersistence, "", false, 1, 0},
		{"acquire applied, replies lost", acquire, faultproxy.ReplyLost, attempts, false, false, isPersistence, idempotency.StatusInProgress, true, 1, 0},
		{"complete applied, replies lost", complete, faultproxy.ReplyLost, attempts, false, false, nil, idempotency.StatusComplete, false, 1, 0},
		{"complete refused, then stored by the middleware's retry", complete, faultproxy.ResetBeforeServer, attempts, false, false, nil, idempotency.StatusComplete, false, 1, 0},
		{"complete refused on every attempt", complete, faultproxy.ResetBeforeServer, 5 * attempts, false, false, nil, idempotency.StatusInProgress, true, 2, 1},
		{"release refused", release, faultproxy.ResetBeforeServer, attempts, true, false, isDeclined, idempotency.StatusInProgress, true, 1, 1},
		{"release applied, replies lost", release, faultproxy.ReplyLost, attempts, true, false, isDeclined, "", false, 1, 1},
		{"reclaim refused", reclaim, faultproxy.ResetBeforeServer, attempts, false, true, isPersistence, idempotency.StatusUncertain, false, 1, 0},
		{"reclaim applied, replies lost", reclaim, faultproxy.ReplyLost, attempts, false, true, isPersistence, idempotency.StatusUncertain, true, 1, 0},
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			w := newFaultWorld(t, srv)
			h := w.wrap()
			for i, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					w.t = t
					w.catchUp()
					id := fmt.Sprintf("beyond-%d", i)
					if tt.decline {
						w.fail[id] = 1
					}
					if tt.uncertain {
						w.uncertain[id] = 1
						if _, err := w.invoke(h, id); !errors.Is(err, errTimedOut) {
							t.Fatalf("uncertain call: err = %v, want the handler's own error", err)
						}
					}
					w.logs.reset()
					w.proxies.Set(faultRule(tt.rule, tt.fault, tt.times))
					got, err := w.invoke(h, id)
					w.proxies.Set()
					if tt.wantErr == nil {
						w.wantCharged("call under faults", id, got, err)
					} else if !tt.wantErr(err) {
						t.Fatalf("call under faults: err = %v", err)
					}
					w.wantStatus(id, tt.wantStatus)
					if tt.held {
						if _, err := w.invoke(h, id); err == nil {
							t.Errorf("duplicate within the lease: no error, want it turned away")
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

func isDeclined(err error) bool { return errors.Is(err, errCardDeclined) }

// TestFaultsKeepOthersLeases: under faults, an invocation never takes or
// touches a record that another holds. A duplicate of a live IN_PROGRESS
// record is turned away whatever happens to its commands, and an owner
// whose lease was taken over gets ErrLeaseLost from its late Complete and
// Release, however often they are retried.
func TestFaultsKeepOthersLeases(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			w := newFaultWorld(t, srv)
			h := w.wrap()
			ctx := context.Background()
			for _, fault := range faultproxy.RESPFaults {
				t.Run(fault.String(), func(t *testing.T) {
					w.t = t
					w.catchUp()
					now := w.now()

					// Another invocation holds the order's key.
					id := "held-" + fault.String()
					key := middlewareKey(faultPrefix, `"`+id+`"`)
					other := &idempotency.Record{Key: key, Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Hour), LeaseToken: "other"}
					if existing, err := w.direct.Acquire(ctx, other, now); err != nil || existing != nil {
						t.Fatalf("seeding: %+v, %v", existing, err)
					}
					w.proxies.Set(faultRule(faultproxy.Rule{Script: acquireScript.Hash()}, fault, attempts-1))
					_, err := w.invoke(h, id)
					w.proxies.Set()
					if _, ok := errors.AsType[*idempotency.InProgressError](err); !ok {
						t.Errorf("duplicate of a held key: %v, want an *InProgressError", err)
					}
					if rec := w.record(id); rec == nil || rec.LeaseToken != "other" {
						t.Errorf("record after the duplicate: %+v, want the other invocation's", rec)
					}
					w.wantEffects(id, 0)

					// A's lease ends, and B takes the key over.
					k := "stale-" + fault.String()
					a := &idempotency.Record{Key: k, Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Second), LeaseToken: "a"}
					b := &idempotency.Record{Key: k, Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Hour), LeaseToken: "b"}
					if existing, err := w.store.Acquire(ctx, a, now); err != nil || existing != nil {
						t.Fatalf("A's acquire: %+v, %v", existing, err)
					}
					if existing, err := w.store.Acquire(ctx, b, now.Add(2*time.Second)); err != nil || existing != nil {
						t.Fatalf("B's takeover: %+v, %v", existing, err)
					}
					done := *a
					done.Status, done.LeaseEnd, done.Response = idempotency.StatusComplete, time.Time{}, []byte(`"stale"`)
					for _, op := range []struct {
						name string
						rule faultproxy.Rule
						call func() error
					}{
						{"Complete", faultproxy.Rule{Script: completeScript.Hash()}, func() error { return w.store.Complete(ctx, &done) }},
						{"Release", faultproxy.Rule{Script: releaseScript.Hash()}, func() error { return w.store.Release(ctx, k, "a") }},
					} {
						w.proxies.Set(faultRule(op.rule, fault, attempts-1))
						err := op.call()
						w.proxies.Set()
						if !errors.Is(err, idempotency.ErrLeaseLost) {
							t.Errorf("A's late %s: %v, want ErrLeaseLost", op.name, err)
						}
					}
					if rec, err := w.direct.Get(ctx, k); err != nil || rec.LeaseToken != "b" || rec.Status != idempotency.StatusInProgress {
						t.Errorf("record after A's late writes: %+v, %v; want B's", rec, err)
					}
				})
			}
		})
	}
}

// TestFaultsGet: a read under each fault returns the record.
func TestFaultsGet(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			w := newFaultWorld(t, srv)
			ctx := context.Background()
			now := w.now()
			rec := &idempotency.Record{Key: "get", Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Hour), LeaseToken: "t"}
			if _, err := w.direct.Acquire(ctx, rec, now); err != nil {
				t.Fatal(err)
			}
			for _, fault := range faultproxy.RESPFaults {
				w.proxies.Set(faultRule(faultproxy.Rule{Script: getScript.Hash()}, fault, attempts-1))
				got, err := w.store.Get(ctx, "get")
				w.proxies.Set()
				if err != nil || got.LeaseToken != "t" {
					t.Errorf("Get under %v: %+v, %v", fault, got, err)
				}
			}
		})
	}
}
