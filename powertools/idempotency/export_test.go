package idempotency

import "time"

// SetWaitTiming sets the first wait and the margin before the deadline of
// WithWaitForInProgress, for tests that would otherwise wait seconds, and
// returns a function that restores them. Tests that call it must not run
// in parallel.
func SetWaitTiming(first, margin time.Duration) (restore func()) {
	oldFirst, oldMargin := waitFirst, waitMargin
	waitFirst, waitMargin = first, margin
	return func() { waitFirst, waitMargin = oldFirst, oldMargin }
}
