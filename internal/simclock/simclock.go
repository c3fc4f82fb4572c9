// Package simclock lets the simulator (internal/sim) give an invocation a
// clock of its own: the idempotency engine reads the time left before a
// deadline, waits and draws the jitter of its waits from the Clock that
// the invocation's context carries, and from the real clock when it
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
