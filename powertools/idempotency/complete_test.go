package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/fake"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// flakyCompleteStore refuses the first failures COMPLETED writes with err,
// as DynamoDB refuses a write under throttling or a server error, then
// passes them on.
type flakyCompleteStore struct {
	idempotency.Store
	failures int32
	err      error
	attempts atomic.Int32
}

func (s *flakyCompleteStore) Complete(ctx context.Context, rec *idempotency.Record) error {
	if s.attempts.Add(1) <= s.failures {
		return s.err
	}
	return s.Store.Complete(ctx, rec)
}

// TestCompleteRetried: a COMPLETED write that fails for a reason that may
// pass is tried again while the lease leaves time, so that a passing fault
// does not leave the key to run the effect again once the lease ends.
func TestCompleteRetried(t *testing.T) {
	t.Parallel()
	errDown := errors.New("throttled")
	lost := fmt.Errorf("fake: token differs: %w", idempotency.ErrLeaseLost)
	tests := []struct {
		name         string
		failures     int32
		err          error
		deadline     time.Duration // from now
		wantAttempts int32
		wantStatus   idempotency.Status // of the record afterwards
		wantErrorLog bool
	}{
		{"two failures, then stored", 2, errDown, 10 * time.Second, 3, idempotency.StatusComplete, false},
		{"failing on every attempt: given up after four more", 100, errDown, 10 * time.Second, 5, idempotency.StatusInProgress, true},
		{"lease nearly over: no retry", 1, errDown, 400 * time.Millisecond, 1, idempotency.StatusInProgress, true},
		{"lease lost: final, no retry", 1, lost, 10 * time.Second, 1, idempotency.StatusInProgress, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := idempotencytest.NewStore()
			store := &flakyCompleteStore{Store: mem, failures: tc.failures, err: tc.err}
			start := time.Now()
			logs := &fake.Log{}
			var runs atomic.Int32
			h := idempotency.Wrap(store, func(_ context.Context, o order) (receipt, error) {
				runs.Add(1)
				return receipt{OrderID: o.OrderID, Charged: o.Amount}, nil
			}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"), idempotency.WithLogger(slog.New(logs)),
				// The records' clock stands still, so that the duplicate
				// below finds the lease live however slow the machine;
				// the retries measure the deadline on the real clock.
				idempotency.WithClock(func() time.Time { return start }))
			ctx, cancel := context.WithTimeout(context.Background(), tc.deadline)
			defer cancel()
			event := []byte(`{"order_id":"o-1","amount":2}`)
			resp, err := h.Invoke(ctx, event)
			if err != nil || string(resp) != `{"order_id":"o-1","charged":2}` {
				t.Fatalf("Invoke = %s, %v; want the handler's response: a success is never turned into an error", resp, err)
			}
			if got := store.attempts.Load(); got != tc.wantAttempts {
				t.Errorf("%d attempts at the COMPLETED write, want %d", got, tc.wantAttempts)
			}
			rec, err := mem.Get(context.Background(), keyOf("o-1"))
			if err != nil || rec.Status != tc.wantStatus {
				t.Fatalf("record = %+v, %v; want status %s", rec, err, tc.wantStatus)
			}
			if got := len(logs.At(slog.LevelError)) == 1; got != tc.wantErrorLog {
				t.Errorf("error logged: %v, want %v (%+v)", got, tc.wantErrorLog, logs.At(slog.LevelError))
			}
			// A duplicate within the lease, a later invocation with a
			// deadline of its own: the replay once stored, else
			// InProgressError; never a second run.
			dupCtx, cancelDup := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancelDup()
			resp, err = h.Invoke(dupCtx, event)
			switch tc.wantStatus {
			case idempotency.StatusComplete:
				if err != nil || string(resp) != `{"order_id":"o-1","charged":2}` {
					t.Errorf("duplicate = %s, %v; want the replay", resp, err)
				}
			default:
				if !errors.As(err, new(*idempotency.InProgressError)) {
					t.Errorf("duplicate: err = %v, want an InProgressError", err)
				}
			}
			if n := runs.Load(); n != 1 {
				t.Errorf("handler ran %d times, want 1", n)
			}
		})
	}
}
