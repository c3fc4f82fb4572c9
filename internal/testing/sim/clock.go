package sim

import (
	"context"
	"math/rand/v2"
	"time"
)

// This file is time as an invocation sees it: the context Lambda gives it,
// whose deadline is on the simulated clock, and the clock of its sandbox,
// which is the simulated clock plus the sandbox's skew.

// epoch is when every schedule starts: a fixed instant, so that a seed
// replays the same times.
var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// invocationContext is the context of one invocation: its Deadline is
// the simulated instant at which Lambda ends it. Done is nil: at the
// deadline the scheduler kills the invocation's process (Lambda stops a
// timed-out invocation), which is all a cancellation could tell it, and a
// nil Done keeps the context package from starting a goroutine of its own
// to watch a foreign context.
type invocationContext struct {
	deadline time.Time
}

func (c *invocationContext) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *invocationContext) Done() <-chan struct{}       { return nil }
func (c *invocationContext) Err() error                  { return nil }
func (c *invocationContext) Value(any) any               { return nil }

// sandboxClock is a sandbox's clock: the simulated time plus its skew.
type sandboxClock struct {
	s    *scheduler
	skew time.Duration
	// The simulated times of its last two reads: when the observer runs,
	// the one before its own read is the engine's last (see
	// checker.returnedError).
	last, prev time.Time
}

// now is what WithClock reads.
func (c *sandboxClock) now() time.Time {
	c.prev, c.last = c.last, c.s.now
	return c.s.now.Add(c.skew)
}

// invocationClock is the simclock.Clock of one invocation: it waits on the
// simulated clock, as the invocation's task, and draws from the
// invocation's own seeded source.
type invocationClock struct {
	sandbox *sandboxClock
	task    func() *task
	rng     *rand.Rand
}

// Now is the sandbox's clock, as the store reads it (redis.Store's TTL of
// a COMPLETED record); the engine reads WithClock's.
func (c *invocationClock) Now() time.Time {
	return c.sandbox.s.now.Add(c.sandbox.skew)
}

// Until is measured on the sandbox's clock, as time.Until is on a real
// machine.
func (c *invocationClock) Until(t time.Time) time.Duration {
	return t.Sub(c.sandbox.s.now.Add(c.sandbox.skew))
}

func (c *invocationClock) Sleep(_ context.Context, d time.Duration) error {
	c.task().sleep(d)
	return nil
}

func (c *invocationClock) N(n time.Duration) time.Duration {
	if n <= 0 {
		return 0
	}
	return time.Duration(c.rng.Int64N(int64(n)))
}
