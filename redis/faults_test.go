package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/internal/testing/faultworld"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// TestFaultsRetried injects each fault into each command of the
// middleware once, and on all of go-redis's attempts but the last. The
// retried script meets the invocation's own IN_PROGRESS record (acquire),
// its own COMPLETED or UNCERTAIN record (complete), nothing (release), or
// its own new token (reclaim).
//
// Not in parallel: its acquire-eval case flushes the servers' scripts,
// and a test running beside it whose faults count a script's requests
// would see a NOSCRIPT that its server never applied.
func TestFaultsRetried(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			w := newFaultWorld(t, srv)
			acquire := faultproxy.Rule{Script: acquireScript.Hash()}
			complete := faultproxy.Rule{Script: completeScript.Hash()}
			steps := []faultworld.Step{
				{Name: "acquire", Rule: acquire},
				// The servers forget the scripts first, so that the
				// command hit is EVAL, after EVALSHA's NOSCRIPT.
				{Name: "acquire-eval", Rule: faultproxy.Rule{Op: "EVAL", Script: acquireScript.Hash()}, Prepare: w.flushScripts},
				{Name: "complete", Rule: complete},
				{Name: "release", Rule: faultproxy.Rule{Script: releaseScript.Hash()}, DeclineFirst: true},
				{Name: "replay", Rule: acquire, Dupe: true},
				{Name: "hold", Rule: complete, UncertainFirst: true, HitsUncertainWrite: true},
				{Name: "reclaim", Rule: faultproxy.Rule{Script: reclaimScript.Hash()}, UncertainFirst: true},
			}
			w.TestRetried(t, w.wrap(), steps, faultproxy.RESPFaults, []int{1, attempts - 1})
		})
	}
}

// TestFaultsBeyondRetries breaks every attempt go-redis makes at one
// command, on the write paths and on a reclaim of an UNCERTAIN record.
func TestFaultsBeyondRetries(t *testing.T) {
	t.Parallel()
	refused := func(script *redis.Script) faultproxy.Rule {
		return faultproxy.Rule{Script: script.Hash(), Fault: faultproxy.ResetBeforeServer}
	}
	reclaim := refused(reclaimScript)
	cases := append(faultworld.BeyondCases(faultworld.Paths{
		Acquire: refused(acquireScript), Complete: refused(completeScript), Release: refused(releaseScript),
		Attempts: attempts,
	}),
		faultworld.Beyond{Name: "reclaim refused", Rule: reclaim, Fault: reclaim.Fault, Times: attempts, Uncertain: true,
			WantErr: faultworld.IsPersistence, WantStatus: idempotency.StatusUncertain, WantEffects: 1},
		faultworld.Beyond{Name: "reclaim applied, replies lost", Rule: reclaim, Fault: faultproxy.ReplyLost, Times: attempts, Uncertain: true,
			WantErr: faultworld.IsPersistence, WantStatus: idempotency.StatusUncertain, Held: true, WantEffects: 1},
	)
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			w := newFaultWorld(t, srv)
			w.TestBeyondRetries(t, w.wrap(), cases)
		})
	}
}

// TestFaultsKeepOthersLeases: under faults, an invocation never takes or
// touches a record that another holds. A duplicate of a live IN_PROGRESS
// record is turned away whatever happens to its commands, and an owner
// whose lease was taken over gets ErrLeaseLost from its late Complete and
// Release, however often they are retried.
func TestFaultsKeepOthersLeases(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			w := newFaultWorld(t, srv)
			h := w.wrap()
			ctx := context.Background()
			for _, fault := range faultproxy.RESPFaults {
				t.Run(fault.String(), func(t *testing.T) {
					w.T = t
					w.CatchUp()
					now := w.Now()

					// Another invocation holds the order's key.
					id := "held-" + fault.String()
					key := faultworld.Key(id)
					other := &idempotency.Record{Key: key, Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Hour), LeaseToken: "other"}
					if existing, err := w.direct.Acquire(ctx, other, now); err != nil || existing != nil {
						t.Fatalf("seeding: %+v, %v", existing, err)
					}
					w.Proxies.Set(faultworld.Rule(faultproxy.Rule{Script: acquireScript.Hash()}, fault, attempts-1))
					_, err := w.Invoke(h, id)
					w.Proxies.Set()
					if _, ok := errors.AsType[*idempotency.InProgressError](err); !ok {
						t.Errorf("duplicate of a held key: %v, want an *InProgressError", err)
					}
					if rec := w.Record(id); rec == nil || rec.LeaseToken != "other" {
						t.Errorf("record after the duplicate: %+v, want the other invocation's", rec)
					}
					w.WantEffects(id, 0)

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
						w.Proxies.Set(faultworld.Rule(op.rule, fault, attempts-1))
						err := op.call()
						w.Proxies.Set()
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
	t.Parallel()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			w := newFaultWorld(t, srv)
			ctx := context.Background()
			now := w.Now()
			rec := &idempotency.Record{Key: "get", Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Hour), LeaseToken: "t"}
			if _, err := w.direct.Acquire(ctx, rec, now); err != nil {
				t.Fatal(err)
			}
			for _, fault := range faultproxy.RESPFaults {
				w.Proxies.Set(faultworld.Rule(faultproxy.Rule{Script: getScript.Hash()}, fault, attempts-1))
				got, err := w.store.Get(ctx, "get")
				w.Proxies.Set()
				if err != nil || got.LeaseToken != "t" {
					t.Errorf("Get under %v: %+v, %v", fault, got, err)
				}
			}
		})
	}
}
