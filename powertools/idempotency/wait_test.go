package idempotency_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/simclock"
	"github.com/gopowertools/lambda/internal/testing/fake"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// stepClock is a simclock.Clock that waits by moving a fake.Clock: the
// seam the simulator drives (internal/testing/sim).
type stepClock struct {
	clock *fake.Clock
	waits []time.Duration
}

func (c *stepClock) Now() time.Time                  { return c.clock.Now() }
func (c *stepClock) Until(t time.Time) time.Duration { return t.Sub(c.clock.Now()) }
func (c *stepClock) N(n time.Duration) time.Duration { return time.Duration(rand.Int64N(int64(n))) }
func (c *stepClock) Sleep(_ context.Context, d time.Duration) error {
	c.waits = append(c.waits, d)
	c.clock.Advance(d)
	return nil
}

// TestWaitsGoThroughTheSimulatorsClock: a duplicate that waits for an
// IN_PROGRESS record, and the time left before its deadline, are
// measured on the clock its context carries, not on the real one: the
// wait of seconds here takes none.
func TestWaitsGoThroughTheSimulatorsClock(t *testing.T) {
	clock := newFakeClock()
	store := idempotencytest.NewStore()
	h := idempotency.Wrap(store, func(ctx context.Context, in struct{ ID string }) (string, error) { return "done", nil },
		idempotency.WithKeyPrefix("seam"), idempotency.WithEventKey("ID"),
		idempotency.WithClock(clock.Now), idempotency.WithWaitForInProgress(true))

	// Another invocation holds the key until its deadline, 30 s away.
	holder := &idempotency.Record{Status: idempotency.StatusInProgress, LeaseToken: "other",
		Expiry: clock.Now().Add(time.Hour), LeaseEnd: clock.Now().Add(30 * time.Second)}
	key, _, err := h.KeyOf([]byte(`{"ID":"1"}`))
	if err != nil {
		t.Fatal(err)
	}
	holder.Key = key
	if existing, err := store.Acquire(context.Background(), holder, clock.Now()); err != nil || existing != nil {
		t.Fatal(existing, err)
	}

	sim := &stepClock{clock: clock}
	ctx, cancel := context.WithDeadline(context.Background(), clock.Now().Add(10*time.Second))
	defer cancel()
	start := time.Now()
	_, err = h.Invoke(simclock.With(ctx, sim), []byte(`{"ID":"1"}`))
	if !errors.As(err, new(*idempotency.InProgressError)) {
		t.Fatalf("Invoke = %v, want InProgressError once the wait ran out", err)
	}
	var waited time.Duration
	for _, w := range sim.waits {
		waited += w
	}
	// The wait stops a second before the deadline, measured on the
	// context's clock: about 9 s of simulated time, in a few reads.
	if waited < 4*time.Second || waited > 9*time.Second || len(sim.waits) < 5 {
		t.Errorf("waited %v in %d waits, want up to 9 s in several", waited, len(sim.waits))
	}
	if real := time.Since(start); real > 2*time.Second {
		t.Errorf("the wait took %v of real time", real)
	}
}
