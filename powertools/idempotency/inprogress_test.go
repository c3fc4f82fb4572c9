package idempotency_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// countingStore counts the store's reads, the requests a waiting
// duplicate makes.
type countingStore struct {
	idempotency.Store
	gets atomic.Int32
}

func (s *countingStore) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, key)
}

// TestWaitForInProgress runs a duplicate while the first invocation is
// still running, with WithWaitForInProgress: it gets the first's
// response, or runs the handler itself once the first has failed, or
// gives up before its own deadline; and its reads are few.
func TestWaitForInProgress(t *testing.T) {
	defer idempotency.SetWaitTiming(5*time.Millisecond, 100*time.Millisecond)()
	const event = `{"order_id":"o-1","amount":5}`
	tests := []struct {
		name string
		// how the first invocation ends after it is let go: nil, its
		// error, or never within the test
		firstErr error
		hang     bool
		// the duplicate's deadline
		deadline time.Duration
		wantErr  func(error) bool // nil: the first's response
		wantRuns int32
		// the outcomes of both invocations, in either order
		wantOutcomes [2]idempotency.Outcome
	}{
		{name: "the first completes: its response", deadline: 10 * time.Second, wantRuns: 1,
			wantOutcomes: [2]idempotency.Outcome{idempotency.OutcomeNew, idempotency.OutcomeReplayed}},
		{name: "the first fails: the duplicate runs the handler", firstErr: errors.New("declined"), deadline: 10 * time.Second, wantRuns: 2,
			wantOutcomes: [2]idempotency.Outcome{idempotency.OutcomeReleased, idempotency.OutcomeNew}},
		{name: "the first outlasts the wait", hang: true, deadline: 600 * time.Millisecond, wantErr: isA[*idempotency.InProgressError], wantRuns: 1,
			wantOutcomes: [2]idempotency.Outcome{idempotency.OutcomeInProgress, idempotency.OutcomeNew}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &countingStore{Store: idempotencytest.NewStore()}
			started, release := make(chan struct{}), make(chan struct{})
			var runs atomic.Int32
			var mu sync.Mutex
			var outcomes []idempotency.Outcome
			h := idempotency.Wrap(store, func(ctx context.Context, o order) (receipt, error) {
				if runs.Add(1) == 1 {
					close(started)
					<-release
					if tt.firstErr != nil {
						return receipt{}, tt.firstErr
					}
					return receipt{OrderID: o.OrderID, Charged: 1}, nil
				}
				return receipt{OrderID: o.OrderID, Charged: 2}, nil
			}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"), idempotency.WithWaitForInProgress(true),
				idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) {
					mu.Lock()
					defer mu.Unlock()
					outcomes = append(outcomes, o.Outcome)
				}))

			firstDone := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				_, err := h.Invoke(ctx, []byte(event))
				firstDone <- err
			}()
			<-started
			const firstRuns = 300 * time.Millisecond
			if !tt.hang {
				time.AfterFunc(firstRuns, func() { close(release) })
			}
			ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
			defer cancel()
			begin := time.Now()
			got, err := h.Invoke(ctx, []byte(event))
			waited := time.Since(begin)
			if tt.hang {
				close(release)
			}
			<-firstDone

			switch {
			case tt.wantErr != nil && !tt.wantErr(err):
				t.Fatalf("duplicate: %s, %v; want another error", got, err)
			case tt.wantErr == nil && err != nil:
				t.Fatalf("duplicate: %v", err)
			case tt.wantErr == nil && tt.wantRuns == 1 && string(got) != `{"order_id":"o-1","charged":1}`:
				t.Errorf("duplicate got %s, want the first's response", got)
			}
			if runs.Load() != tt.wantRuns {
				t.Errorf("handler ran %d times, want %d", runs.Load(), tt.wantRuns)
			}
			slices.Sort(outcomes)
			slices.Sort(tt.wantOutcomes[:])
			if len(outcomes) != 2 || [2]idempotency.Outcome(outcomes) != tt.wantOutcomes {
				t.Errorf("outcomes %v, want %v", outcomes, tt.wantOutcomes)
			}
			// Waits double from 5 ms, give or take a quarter: a wait of w
			// takes at most log2(w / 3.75 ms) + 2 reads.
			maxReads := int32(math.Log2(float64(waited)/float64(3750*time.Microsecond))) + 2
			if reads := store.gets.Load(); reads < 1 || reads > maxReads {
				t.Errorf("the duplicate read the record %d times in %v, want 1 to %d", reads, waited, maxReads)
			}
			if tt.hang && waited > tt.deadline {
				t.Errorf("the duplicate waited %v, past its deadline of %v", waited, tt.deadline)
			}
		})
	}
}

// TestWaitReadsGrowWithTheLogOfTheWait holds a key for the whole of
// waits of different lengths and counts the duplicate's reads: doubling
// the wait adds about one read.
func TestWaitReadsGrowWithTheLogOfTheWait(t *testing.T) {
	defer idempotency.SetWaitTiming(time.Millisecond, 0)()
	for _, wait := range []time.Duration{100 * time.Millisecond, 400 * time.Millisecond, 1600 * time.Millisecond} {
		store := &countingStore{Store: idempotencytest.NewStore()}
		now := time.Now()
		store.Store.(*idempotencytest.Store).Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusInProgress,
			Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Hour), LeaseToken: "holder"})
		h := idempotency.Wrap(store, func(context.Context, order) (receipt, error) { return receipt{}, nil },
			idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"), idempotency.WithWaitForInProgress(true))
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		_, err := h.Invoke(ctx, []byte(`{"order_id":"o-1"}`))
		cancel()
		var inProgress *idempotency.InProgressError
		if !errors.As(err, &inProgress) || inProgress.LeaseEnd.Sub(now.Add(time.Hour)).Abs() >= time.Millisecond {
			t.Fatalf("wait %v: %v, want an InProgressError with the holder's lease end", wait, err)
		}
		// From 1 ms, doubling, give or take a quarter.
		// The upper bound is the point; the lower one only shows that it
		// polls, and leaves room for timers that fire late on a busy
		// machine.
		low, high := int32(2), int32(math.Log2(float64(wait/time.Millisecond)/0.75))+1
		if reads := store.gets.Load(); reads < low || reads > high {
			t.Errorf("wait %v: %d reads, want %d to %d", wait, reads, low, high)
		}
	}
}

// TestAbandonPolicies puts the record of an invocation that ended without
// completing, as each policy writes it, and sends a duplicate after its
// deadline.
func TestAbandonPolicies(t *testing.T) {
	t.Parallel()
	const event = `{"order_id":"o-1","amount":5}`
	errUnknown := errors.New("the provider does not answer")
	tests := []struct {
		name   string
		policy idempotency.AbandonPolicy
		// the reconcile function's answer, when set
		reconcile   func(ctx context.Context, key string) (receipt, bool, error)
		sinceEnd    time.Duration // from the dead invocation's deadline to the duplicate
		wantErr     func(error) bool
		wantRuns    int32
		wantStatus  idempotency.Status // "" gone
		wantOutcome idempotency.Outcome
	}{
		{name: "retry: the duplicate runs it again", policy: idempotency.AbandonRetry, sinceEnd: time.Second,
			wantRuns: 1, wantStatus: idempotency.StatusComplete, wantOutcome: idempotency.OutcomeNew},
		{name: "block, within the grace: in progress", policy: idempotency.AbandonBlock, sinceEnd: time.Second,
			wantErr: isA[*idempotency.InProgressError], wantStatus: idempotency.StatusInProgress, wantOutcome: idempotency.OutcomeInProgress},
		{name: "block: locked until expiry", policy: idempotency.AbandonBlock, sinceEnd: idempotency.AbandonGrace,
			wantErr: isA[*idempotency.AbandonedError], wantStatus: idempotency.StatusInProgress, wantOutcome: idempotency.OutcomeAbandoned},
		{name: "uncertain, no reconcile: waits for an operator", policy: idempotency.AbandonUncertain, sinceEnd: idempotency.AbandonGrace,
			wantErr: isA[*idempotency.UncertainError], wantStatus: idempotency.StatusUncertain, wantOutcome: idempotency.OutcomeUncertain},
		{name: "uncertain, it happened: its result, no run", policy: idempotency.AbandonUncertain, sinceEnd: idempotency.AbandonGrace,
			reconcile: func(context.Context, string) (receipt, bool, error) {
				return receipt{OrderID: "o-1", Charged: 5}, true, nil
			},
			wantStatus: idempotency.StatusComplete, wantOutcome: idempotency.OutcomeReplayed},
		{name: "uncertain, it did not happen: one run", policy: idempotency.AbandonUncertain, sinceEnd: idempotency.AbandonGrace,
			reconcile: func(context.Context, string) (receipt, bool, error) { return receipt{}, false, nil },
			wantRuns:  1, wantStatus: idempotency.StatusComplete, wantOutcome: idempotency.OutcomeNew},
		{name: "uncertain, cannot tell: still uncertain", policy: idempotency.AbandonUncertain, sinceEnd: idempotency.AbandonGrace,
			reconcile: func(context.Context, string) (receipt, bool, error) { return receipt{}, false, errUnknown },
			wantErr:   func(err error) bool { return errors.Is(err, errUnknown) && isA[*idempotency.UncertainError](err) }, wantStatus: idempotency.StatusUncertain, wantOutcome: idempotency.OutcomeUncertain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var outcomes []idempotency.Outcome
			opts := []idempotency.Option{idempotency.WithAbandonPolicy(tt.policy),
				idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) { outcomes = append(outcomes, o.Outcome) })}
			if tt.reconcile != nil {
				opts = append(opts, idempotency.WithReconcile(tt.reconcile))
			}
			f := newFixture(t, nil, opts...)

			// The dead invocation's record, as its policy wrote it.
			deadline := f.clock.Now().Add(-tt.sinceEnd)
			rec := &idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusInProgress, Expiry: deadline.Add(time.Hour), LeaseToken: "dead"}
			if tt.policy == idempotency.AbandonRetry {
				rec.LeaseEnd = deadline
			} else {
				rec.LeaseEnd, rec.Deadline = rec.Expiry, deadline
			}
			f.store.Put(rec)

			_, err := f.invoke(t, event)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("duplicate: %v", err)
			case tt.wantErr != nil && !tt.wantErr(err):
				t.Fatalf("duplicate: %v, want another error", err)
			}
			if f.calls.Load() != tt.wantRuns {
				t.Errorf("handler ran %d times, want %d", f.calls.Load(), tt.wantRuns)
			}
			var status idempotency.Status
			if recs := f.store.Records(); len(recs) == 1 {
				status = recs[0].Status
			}
			if status != tt.wantStatus {
				t.Errorf("record status %q, want %q", status, tt.wantStatus)
			}
			if len(outcomes) != 1 || outcomes[0] != tt.wantOutcome {
				t.Errorf("outcomes %v, want %s", outcomes, tt.wantOutcome)
			}
		})
	}
}

// TestAbandonPolicyRecords checks the IN_PROGRESS record each policy
// writes, as the handler sees it: the lease ends at the deadline (plus
// WithLeaseBeyondDeadline) under retry, at the expiry under the others,
// which keep the deadline.
func TestAbandonPolicyRecords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		opts         []idempotency.Option
		wantLeaseEnd func(deadline, expiry time.Time) time.Time
		wantDeadline bool
	}{
		{"retry", nil, func(d, _ time.Time) time.Time { return d }, false},
		{"retry, lease beyond the deadline", []idempotency.Option{idempotency.WithLeaseBeyondDeadline(time.Minute)},
			func(d, _ time.Time) time.Time { return d.Add(time.Minute) }, false},
		{"block", []idempotency.Option{idempotency.WithAbandonPolicy(idempotency.AbandonBlock)}, func(_, e time.Time) time.Time { return e }, true},
		{"uncertain", []idempotency.Option{idempotency.WithAbandonPolicy(idempotency.AbandonUncertain)}, func(_, e time.Time) time.Time { return e }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen idempotency.Record
			var f *fixture
			f = newFixture(t, func(ctx context.Context, o order) (receipt, error) {
				seen = f.store.Records()[0]
				return receipt{}, nil
			}, tt.opts...)
			deadline := f.clock.Now().Add(time.Minute) // as f.invoke sets it
			if _, err := f.invoke(t, `{"order_id":"o-1"}`); err != nil {
				t.Fatal(err)
			}
			want := tt.wantLeaseEnd(deadline, seen.Expiry)
			if !seen.LeaseEnd.Equal(want) || seen.Deadline.IsZero() == tt.wantDeadline || (tt.wantDeadline && !seen.Deadline.Equal(deadline)) {
				t.Errorf("record %+v; want lease end %v, deadline kept: %v", seen, want, tt.wantDeadline)
			}
		})
	}
}

// TestAbandonPolicyConfig checks the variable's spellings and refusals.
func TestAbandonPolicyConfig(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "fn")
	for _, tt := range []struct {
		value string
		ok    bool
	}{{"retry", true}, {"BLOCK", true}, {"Uncertain", true}, {"never", false}} {
		t.Setenv("POWERTOOLS_IDEMPOTENCY_ABANDON_POLICY", tt.value)
		_, err := idempotency.New(idempotencytest.NewStore(), func(context.Context, order) (receipt, error) { return receipt{}, nil })
		var cfg *idempotency.ConfigError
		if ok := err == nil; ok != tt.ok || (!ok && (!errors.As(err, &cfg) || cfg.Name != "POWERTOOLS_IDEMPOTENCY_ABANDON_POLICY")) {
			t.Errorf("%q: %v, want ok %v", tt.value, err, tt.ok)
		}
	}
	t.Setenv("POWERTOOLS_IDEMPOTENCY_ABANDON_POLICY", "")
	if _, err := idempotency.New(idempotencytest.NewStore(), func(context.Context, order) (receipt, error) { return receipt{}, nil },
		idempotency.WithLeaseBeyondDeadline(-time.Second)); !errors.As(err, new(*idempotency.ConfigError)) {
		t.Errorf("negative WithLeaseBeyondDeadline: %v, want a ConfigError", err)
	}
}

// TestInProgressWithoutPayloadHash: a live IN_PROGRESS record without a
// payload hash (written before validation was turned on, by a writer that
// keeps none, or put by a test) answers a duplicate with
// *InProgressError, as any live lease does: nothing is replayed from it,
// so there is nothing to conflict with yet. Once it completes without a
// hash, the completed record conflicts, as docs/errors.md says.
func TestInProgressWithoutPayloadHash(t *testing.T) {
	t.Parallel()
	store := idempotencytest.NewStore()
	now := time.Now()
	store.Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute), LeaseToken: "seeded"})
	h := idempotency.Wrap(store, (&echo{}).handle, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"), idempotency.WithPayloadValidation("amount"))
	_, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-1","amount":1}`))
	if e, ok := errors.AsType[*idempotency.InProgressError](err); !ok || !e.LeaseEnd.Equal(now.Add(time.Minute).Truncate(time.Millisecond)) {
		t.Fatalf("err = %v (%T), want *InProgressError until the seeded lease end", err, err)
	}

	store.Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusComplete, Expiry: now.Add(time.Hour), LeaseToken: "seeded", Response: []byte(`"done"`)})
	if _, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-1","amount":1}`)); !isA[*idempotency.PayloadConflictError](err) {
		t.Errorf("completed without a hash: err = %v (%T), want *PayloadConflictError", err, err)
	}
}
