package idempotency

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/gopowertools/lambda/internal/simclock"
)

// The time left before a deadline, a wait and its jitter are read from
// the clock that the invocation's context carries, the simulator's seam
// (internal/simclock), and from the real clock when it carries none,
// which is always outside the simulator. Records are judged by the
// wrapper's clock, WithClock's, which is another.

// sleep waits d, or until ctx is done, when it returns ctx.Err().
func sleep(ctx context.Context, d time.Duration) error {
	if c := simclock.From(ctx); c != nil {
		return c.Sleep(ctx, d)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// until returns the time left until t, a time of the clock that set the
// context's deadline.
func until(ctx context.Context, t time.Time) time.Duration {
	if c := simclock.From(ctx); c != nil {
		return c.Until(t)
	}
	return time.Until(t)
}

// jitter returns d give or take a quarter.
func jitter(ctx context.Context, d time.Duration) time.Duration {
	if c := simclock.From(ctx); c != nil {
		return d*3/4 + c.N(d/2+1)
	}
	return d*3/4 + rand.N(d/2+1)
}
