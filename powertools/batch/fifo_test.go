package batch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/batch"
)

func TestFIFORules(t *testing.T) {
	t.Parallel()
	records := []string{"a1@A", "b1@B", "a2@A", "c1@C", "b2@B", "a3@A"}
	tests := []struct {
		name        string
		arn         string
		skipGroup   bool
		concurrency int
		fail        []string
		wantFailed  []string
		wantSkipped []string // subset of wantFailed
		wantRan     []string // sorted
	}{
		{
			name: "standard queue goes on after a failure", arn: standardARN,
			fail: []string{"b1"}, wantFailed: []string{"b1"},
			wantRan: []string{"a1", "a2", "a3", "b1", "b2", "c1"},
		},
		{
			name: "fifo stops at the first failure", arn: fifoARN,
			fail: []string{"b1"}, wantFailed: []string{"b1", "a2", "c1", "b2", "a3"},
			wantSkipped: []string{"a2", "c1", "b2", "a3"}, wantRan: []string{"a1", "b1"},
		},
		{
			name: "fifo stops at the first failure even with concurrency", arn: fifoARN, concurrency: 4,
			fail: []string{"b1"}, wantFailed: []string{"b1", "a2", "c1", "b2", "a3"},
			wantSkipped: []string{"a2", "c1", "b2", "a3"}, wantRan: []string{"a1", "b1"},
		},
		{
			name: "fifo, failure in the last record", arn: fifoARN,
			fail: []string{"a3"}, wantFailed: []string{"a3"},
			wantRan: []string{"a1", "a2", "a3", "b1", "b2", "c1"},
		},
		{
			name: "fifo group skip fails only the rest of the group", arn: fifoARN, skipGroup: true,
			fail: []string{"a2"}, wantFailed: []string{"a2", "a3"},
			wantSkipped: []string{"a3"}, wantRan: []string{"a1", "a2", "b1", "b2", "c1"},
		},
		{
			name: "fifo group skip, two groups fail", arn: fifoARN, skipGroup: true,
			fail: []string{"a1", "b2"}, wantFailed: []string{"a1", "a2", "b2", "a3"},
			wantSkipped: []string{"a2", "a3"}, wantRan: []string{"a1", "b1", "b2", "c1"},
		},
		{
			name: "fifo group skip with concurrency", arn: fifoARN, skipGroup: true, concurrency: 3,
			fail: []string{"a2"}, wantFailed: []string{"a2", "a3"},
			wantSkipped: []string{"a3"}, wantRan: []string{"a1", "a2", "b1", "b2", "c1"},
		},
		{
			name: "group skip has no effect on a standard queue", arn: standardARN, skipGroup: true,
			fail: []string{"a1"}, wantFailed: []string{"a1"},
			wantRan: []string{"a1", "a2", "a3", "b1", "b2", "c1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn, calls := behave(tt.fail, nil)
			p, err := batch.New(batch.WithSkipGroupOnFailure(tt.skipGroup), batch.WithConcurrency(max(tt.concurrency, 1)), quiet())
			if err != nil {
				t.Fatal(err)
			}
			res := p.SQS(context.Background(), sqsEvent(tt.arn, records...), fn)
			if got := failedIDs(res); !slices.Equal(got, tt.wantFailed) {
				t.Errorf("failed = %v, want %v", got, tt.wantFailed)
			}
			ran := calls()
			slices.Sort(ran)
			if !slices.Equal(ran, tt.wantRan) {
				t.Errorf("ran %v, want %v", ran, tt.wantRan)
			}
			for _, f := range res.Failures {
				var se *batch.SkippedError
				skipped := errors.As(f, &se)
				if skipped != slices.Contains(tt.wantSkipped, f.ID) {
					t.Errorf("%s: error %v, skipped = %v", f.ID, f.Err, skipped)
				}
				if skipped && !slices.Contains(tt.fail, se.FailedID) {
					t.Errorf("%s: skipped because of %q, which did not fail", f.ID, se.FailedID)
				}
			}
		})
	}
}

// TestFIFOGroupSkipOneAtATimeIsInRecordOrder checks that with one worker
// the records of a FIFO batch with group skipping run in the order of the
// batch, as Powertools runs them, not group by group.
func TestFIFOGroupSkipOneAtATimeIsInRecordOrder(t *testing.T) {
	t.Parallel()
	fn, calls := behave([]string{"a2"}, nil)
	p, err := batch.New(batch.WithSkipGroupOnFailure(true), batch.WithConcurrency(1), quiet())
	if err != nil {
		t.Fatal(err)
	}
	p.SQS(context.Background(), sqsEvent(fifoARN, "a1@A", "b1@B", "a2@A", "c1@C", "b2@B", "a3@A"), fn)
	if got, want := calls(), []string{"a1", "b1", "a2", "c1", "b2"}; !slices.Equal(got, want) {
		t.Errorf("ran %v, want %v: record order, a3 skipped after a2", got, want)
	}
}

// TestFIFOGroupsRunInOrder checks that, with group skip and concurrency,
// groups overlap but the records of one group never do, and each group
// runs in its order.
func TestFIFOGroupsRunInOrder(t *testing.T) {
	t.Parallel()
	var specs []string
	for i := range 8 {
		for _, g := range []string{"A", "B", "C", "D"} {
			specs = append(specs, fmt.Sprintf("%s%d@%s", g, i, g))
		}
	}
	var (
		mu       sync.Mutex
		perGroup = map[string][]string{}
		running  = map[string]bool{}
		inFlight atomic.Int32
		maxSeen  atomic.Int32
		overlap  bool
		calls    atomic.Int32
		allIn    = make(chan struct{})
	)
	fn := func(_ context.Context, msg events.SQSMessage) error {
		g := msg.Attributes["MessageGroupId"]
		mu.Lock()
		if running[g] {
			overlap = true
		}
		running[g] = true
		perGroup[g] = append(perGroup[g], msg.MessageId)
		mu.Unlock()
		n := inFlight.Add(1)
		for m := maxSeen.Load(); n > m && !maxSeen.CompareAndSwap(m, n); m = maxSeen.Load() {
		}
		// The first three calls wait for each other: one per worker, so
		// three groups are in flight at once.
		if c := calls.Add(1); c <= 3 {
			if c == 3 {
				close(allIn)
			}
			meet(t, allIn)
		}
		inFlight.Add(-1)
		mu.Lock()
		running[g] = false
		mu.Unlock()
		return nil
	}
	p, _ := batch.New(batch.WithSkipGroupOnFailure(true), batch.WithConcurrency(3), quiet())
	res := p.SQS(context.Background(), sqsEvent(fifoARN, specs...), fn)
	if len(res.Failures) != 0 {
		t.Fatalf("failures: %v", res.Failures)
	}
	if overlap {
		t.Error("two records of one group ran at the same time")
	}
	if m := maxSeen.Load(); m != 3 {
		t.Errorf("max in flight = %d, want 3 groups in parallel", m)
	}
	for g, ids := range perGroup {
		for i, id := range ids {
			if want := fmt.Sprintf("%s%d", g, i); id != want {
				t.Errorf("group %s ran %v, out of order", g, ids)
				break
			}
		}
	}
}
