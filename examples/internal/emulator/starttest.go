package emulator

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// StartTest is [Start] for a test: it fails the test if the emulator does
// not start within 30 seconds, and closes the emulator when the test ends.
// If the test failed and cfg.Output is a [fmt.Stringer] (a buffer), it
// logs the output, which is where the function's own account of a failure
// is.
func StartTest(t testing.TB, cfg Config) *Emulator {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Close()
		if out, ok := cfg.Output.(fmt.Stringer); ok && t.Failed() {
			t.Logf("emulator output:\n%s", out)
		}
	})
	return e
}
