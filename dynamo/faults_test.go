package dynamo

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/internal/testing/faultworld"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// TestFaultsRetried injects each fault into each request of the
// middleware once, and twice (two of the SDK's three attempts). The
// retried conditional put meets the invocation's own IN_PROGRESS record
// (acquire) or COMPLETED record (complete), and the retried delete finds
// nothing (release).
func TestFaultsRetried(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			steps := []faultworld.Step{
				{Name: "acquire", Rule: acquirePut},
				{Name: "complete", Rule: completePut},
				{Name: "release", Rule: releaseDel, DeclineFirst: true},
				{Name: "replay", Rule: acquirePut, Dupe: true},
			}
			if srv.name == "dynalite" {
				// dynalite returns no item with a failed condition, so a
				// duplicate reads the record with GetItem there.
				steps = append(steps, faultworld.Step{Name: "replay-get", Rule: getItemReq, Dupe: true})
			}
			w := newFaultWorld(t, srv)
			w.TestRetried(t, w.Wrap(), steps, faultproxy.HTTPFaults, []int{1, 2})
		})
	}
}

// TestFaultsBeyondRetries breaks every attempt the SDK makes (three) at
// one request, each refusal with another of DynamoDB's error replies.
func TestFaultsBeyondRetries(t *testing.T) {
	t.Parallel()
	cases := faultworld.BeyondCases(faultworld.Paths{
		Acquire:  faultworld.Rule(acquirePut, faultproxy.Throttling, 0),
		Complete: faultworld.Rule(completePut, faultproxy.InternalServerError, 0),
		Release:  faultworld.Rule(releaseDel, faultproxy.ProvisionedThroughputExceeded, 0),
		Attempts: 3,
	})
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			w := newFaultWorld(t, srv)
			w.TestBeyondRetries(t, w.Wrap(), cases)
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
	t.Parallel()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			w := newFaultWorld(t, srv)
			h := idempotency.Wrap(w.store, w.Handler,
				idempotency.WithEventKey("id"),
				idempotency.WithKeyPrefix(faultworld.Prefix),
				idempotency.WithLogger(slog.New(w.Logs)))
			// The deadline leaves the Acquire a second, which a loaded CI
			// machine's moto needs (300 ms once ran out before the handler
			// ran); the COMPLETED write is held past it.
			w.proxy.Set(faultproxy.Rule{Fault: faultproxy.Latency, Op: completePut.Op, BodyContains: completePut.BodyContains, Times: 1, Delay: 1500 * time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			payload, _ := json.Marshal(faultworld.Event{ID: "late"})
			out, err := h.Invoke(ctx, payload)
			if err != nil {
				t.Fatalf("call: %v, want the charge", err)
			}
			if !strings.Contains(string(out), `"late"`) {
				t.Fatalf("call answered %s, want the charge", out)
			}
			w.proxy.Set()
			w.WantStatus("late", idempotency.StatusComplete)
			dup, err := h.Invoke(context.Background(), payload)
			if err != nil || string(dup) != string(out) {
				t.Errorf("duplicate after the deadline: (%s, %v), want the replay %s", dup, err, out)
			}
			w.WantEffects("late", 1)
		})
	}
}
