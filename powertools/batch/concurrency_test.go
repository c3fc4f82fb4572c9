package batch_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/batch"
)

// TestConcurrencyBound measures the records in flight with an atomic
// counter: never more than the bound, and the bound is reached.
func TestConcurrencyBound(t *testing.T) {
	for _, tt := range []struct{ concurrency, records int }{
		{1, 10}, {2, 10}, {5, 10}, {10, 10}, {16, 10},
	} {
		t.Run(fmt.Sprintf("concurrency=%d/records=%d", tt.concurrency, tt.records), func(t *testing.T) {
			var inFlight, maxSeen atomic.Int32
			fn := func(context.Context, events.SQSMessage) error {
				n := inFlight.Add(1)
				for m := maxSeen.Load(); n > m && !maxSeen.CompareAndSwap(m, n); m = maxSeen.Load() {
				}
				time.Sleep(5 * time.Millisecond)
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
			want := int32(min(tt.concurrency, tt.records))
			if got := maxSeen.Load(); got != want {
				t.Errorf("max in flight = %d, want %d", got, want)
			}
		})
	}
}

// TestResultsInRecordOrder makes later records finish first: failures are
// still reported in record order.
func TestResultsInRecordOrder(t *testing.T) {
	const n = 12
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("m%02d", i)
	}
	var finished []string
	done := make(chan string, n)
	fn := func(_ context.Context, msg events.SQSMessage) error {
		i := slices.Index(ids, msg.MessageId)
		time.Sleep(time.Duration(n-i) * 2 * time.Millisecond)
		done <- msg.MessageId
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

// TestNoGoroutineOutlivesTheCall: after the call, the goroutine count is
// back where it was (workers end before the call returns).
func TestNoGoroutineOutlivesTheCall(t *testing.T) {
	before := runtime.NumGoroutine()
	p, _ := batch.New(batch.WithConcurrency(8), quiet())
	fn, _ := behave([]string{"m3"}, []string{"m5"})
	p.SQS(context.Background(), sqsEvent(standardARN, "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"), fn)
	// A worker has called wg.Done when the call returns, but the runtime
	// may take a moment to reap it.
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("goroutines: %d before, %d after", before, after)
	}
}
