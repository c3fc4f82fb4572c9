package batch_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/batch"
)

// TestConcurrencyBound measures the records in flight with an atomic
// counter: never more than the bound, and the bound is reached.
func TestConcurrencyBound(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ concurrency, records int }{
		{1, 10}, {2, 10}, {5, 10}, {10, 10}, {16, 10},
	} {
		t.Run(fmt.Sprintf("concurrency=%d/records=%d", tt.concurrency, tt.records), func(t *testing.T) {
			want := int32(min(tt.concurrency, tt.records))
			var inFlight, maxSeen, calls atomic.Int32
			allIn := make(chan struct{})
			fn := func(context.Context, events.SQSMessage) error {
				n := inFlight.Add(1)
				for m := maxSeen.Load(); n > m && !maxSeen.CompareAndSwap(m, n); m = maxSeen.Load() {
				}
				// The first want calls wait for each other, so the bound
				// is reached whatever the scheduler does.
				if c := calls.Add(1); c <= want {
					if c == want {
						close(allIn)
					}
					meet(t, allIn)
				}
				inFlight.Add(-1)
				return nil
			}
			ids := make([]string, tt.records)
			for i := range ids {
				ids[i] = fmt.Sprintf("m%d", i)
			}
			p, _ := batch.New(batch.WithConcurrency(tt.concurrency), quiet())
			res := p.SQS(context.Background(), sqsEvent(standardARN, ids...), fn)
			if len(res.Failures) != 0 {
				t.Fatal(res.Failures)
			}
			if got := maxSeen.Load(); got != want {
				t.Errorf("max in flight = %d, want %d", got, want)
			}
		})
	}
}

// TestResultsInRecordOrder makes later records finish first: failures are
// still reported in record order.
func TestResultsInRecordOrder(t *testing.T) {
	t.Parallel()
	const n = 12
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("m%02d", i)
	}
	var finished []string
	done := make(chan string, n)
	// Record i finishes once record i+1 has: the last record finishes
	// first.
	gates := make([]chan struct{}, n)
	for i := range gates {
		gates[i] = make(chan struct{})
	}
	fn := func(_ context.Context, msg events.SQSMessage) error {
		i := slices.Index(ids, msg.MessageId)
		if i+1 < n {
			meet(t, gates[i+1])
		}
		done <- msg.MessageId
		close(gates[i])
		if i%3 != 1 {
			return errBoom
		}
		return nil
	}
	p, _ := batch.New(batch.WithConcurrency(n), quiet())
	res := p.SQS(context.Background(), sqsEvent(standardARN, ids...), fn)
	close(done)
	for id := range done {
		finished = append(finished, id)
	}
	if slices.IsSorted(finished) {
		t.Fatalf("records finished in order %v; the test needs them out of order", finished)
	}
	var want []string
	for i, id := range ids {
		if i%3 != 1 {
			want = append(want, id)
		}
	}
	if got := failedIDs(res); !slices.Equal(got, want) {
		t.Errorf("failed = %v, want record order %v", got, want)
	}
	for i, f := range res.Failures {
		if i > 0 && f.Index <= res.Failures[i-1].Index {
			t.Errorf("failure %d has index %d after %d", i, f.Index, res.Failures[i-1].Index)
		}
	}
}

// TestNoGoroutineOutlivesTheCall: workers end before the call returns.
// The call runs in a synctest bubble, and synctest.Test fails (deadlock)
// when a goroutine of the bubble is left blocked after it.
func TestNoGoroutineOutlivesTheCall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, _ := batch.New(batch.WithConcurrency(8), quiet())
		fn, _ := behave([]string{"m3"}, []string{"m5"})
		p.SQS(context.Background(), sqsEvent(standardARN, "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"), fn)
	})
}

// meet waits until ch is closed, for at most ten seconds, so that a
// processor that never runs the waiting records together fails the test
// instead of hanging it.
func meet(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Error("records meant to run at the same time did not")
	}
}
