package fake

import (
	"sync"
	"time"
)

// Clock is a clock that a test moves by hand: give its Now method to
// idempotency.WithClock. It is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock that reads start until it is moved. A clock
// that starts at the real time, on a whole second, keeps the context
// deadlines derived from it in the future for the real clock that
// package context uses.
func NewClock(start time.Time) *Clock {
	return &Clock{now: start}
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
