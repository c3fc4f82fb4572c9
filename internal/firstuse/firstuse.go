// Package firstuse runs a store's check of its configuration on the
// store's first use, with the context of that call, so that its
// constructor sends no request (as sql.Open and redis.NewClient send
// none) and a mistake is still found before the first record is written.
package firstuse

import (
	"context"
	"sync"
	"sync/atomic"
)

// Check is one store's check. Its zero value has not run. It is safe for
// concurrent use.
type Check struct {
	passed atomic.Bool
	mu     sync.Mutex
}

// Do runs check with ctx unless it has passed before, and returns its
// error. A check that fails, whether it refused the configuration or
// could not ask, runs again on the next call: a mistake fixed while the
// process lives (a permission granted, a key created) is then found
// fixed, as Lambda finds it when it retries a function that failed to
// start. A call that finds check running waits for it.
func (c *Check) Do(ctx context.Context, check func(context.Context) error) error {
	if c.passed.Load() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.passed.Load() {
		return nil
	}
	if err := check(ctx); err != nil {
		return err
	}
	c.passed.Store(true)
	return nil
}
