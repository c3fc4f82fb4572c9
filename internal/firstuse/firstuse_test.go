package firstuse

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestDo: a check runs until it passes, and never after.
func TestDo(t *testing.T) {
	t.Parallel()
	refused := errors.New("refused")
	for _, tt := range []struct {
		name    string
		results []error // what the check answers on each run
		runs    int     // after four calls
	}{
		{"passes", []error{nil}, 1},
		{"refuses, then passes", []error{refused, nil}, 2},
		{"refuses three times, then passes", []error{refused, refused, refused, nil}, 4},
		{"refuses every time", []error{refused, refused, refused, refused}, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var c Check
			runs := 0
			check := func(context.Context) error {
				err := tt.results[runs]
				runs++
				return err
			}
			for i := range 4 {
				want := error(nil)
				if i < len(tt.results) {
					want = tt.results[i]
				}
				if err := c.Do(t.Context(), check); err != want {
					t.Errorf("call %d: %v, want %v", i, err, want)
				}
			}
			if runs != tt.runs {
				t.Errorf("the check ran %d times, want %d", runs, tt.runs)
			}
		})
	}
}

// TestDoConcurrent: calls that arrive while the check runs wait for it,
// and it runs once.
func TestDoConcurrent(t *testing.T) {
	t.Parallel()
	var c Check
	var runs atomic.Int32
	release := make(chan struct{})
	check := func(context.Context) error {
		runs.Add(1)
		<-release
		return nil
	}
	var started, done sync.WaitGroup
	for range 8 {
		started.Add(1)
		done.Go(func() {
			started.Done()
			if err := c.Do(t.Context(), check); err != nil {
				t.Error(err)
			}
		})
	}
	started.Wait()
	// Time for the callers to reach the check, or the lock it holds:
	// the test passes, if less sharply, without it.
	time.Sleep(20 * time.Millisecond)
	close(release)
	done.Wait()
	if n := runs.Load(); n != 1 {
		t.Errorf("the check ran %d times, want 1", n)
	}
}
