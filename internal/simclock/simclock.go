// Package simclock lets the simulator (internal/testing/sim) give an invocation a
// clock of its own: the idempotency engine reads the time left before a
// deadline, waits and draws the jitter of its waits from the Clock that
// the invocation's context carries, and the Redis store reads the time
// and bounds its commands by it, and from the real clock when it
// carries none, which is always outside the simulator.
//
// It is a package of its own, internal to the module, so that no user can
// set it: the engine's public clock option, idempotency.WithClock, stays
// what it is (the time records are judged by), and the simulator needs no
// option the library would have to document and keep.
package simclock

import (
	"context"
	"time"
)

// Clock is the time of one invocation as a simulator runs it.
type Clock interface {
	// Now returns the time on the invocation's clock, as time.Now does
	// on the real one.
	Now() time.Time
	// Until returns the time left until t on the invocation's clock, as
	// time.Until does on the real one.
	Until(t time.Time) time.Duration
	// Sleep waits d on that clock, or returns ctx.Err() once ctx is done.
	Sleep(ctx context.Context, d time.Duration) error
	// N returns a number in [0, n), as math/rand/v2's N does, from the
	// simulator's seeded source, so that a schedule replays exactly.
	N(n time.Duration) time.Duration
}

type key struct{}

// With returns ctx carrying c.
func With(ctx context.Context, c Clock) context.Context {
	return context.WithValue(ctx, key{}, c)
}

// From returns the Clock ctx carries, or nil.
func From(ctx context.Context) Clock {
	c, _ := ctx.Value(key{}).(Clock)
	return c
}

// Now is time.Now, on the clock ctx carries when it carries one.
func Now(ctx context.Context) time.Time {
	if c := From(ctx); c != nil {
		return c.Now()
	}
	return time.Now()
}

// WithDeadline is context.WithDeadline, on the clock ctx carries when it
// carries one: the context returned has the deadline d, and its Err is
// context.DeadlineExceeded once that clock has reached d. Its Done is
// ctx's: nothing waits on it in a simulator, whose connections end their
// reads at the deadline themselves, and a channel closed by a timer of
// the real clock would close at a time no schedule controls.
func WithDeadline(ctx context.Context, d time.Time) (context.Context, context.CancelFunc) {
	c := From(ctx)
	if c == nil {
		return context.WithDeadline(ctx, d)
	}
	if cur, ok := ctx.Deadline(); ok && cur.Before(d) {
		d = cur
	}
	return &deadlineContext{Context: ctx, clock: c, deadline: d}, func() {}
}

type deadlineContext struct {
	context.Context
	clock    Clock
	deadline time.Time
}

func (c *deadlineContext) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *deadlineContext) Err() error {
	if c.clock.Until(c.deadline) <= 0 {
		return context.DeadlineExceeded
	}
	return c.Context.Err()
}
