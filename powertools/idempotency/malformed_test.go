package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/strictjson"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// TestMalformedEvent checks that an event that is not valid JSON gets an
// *InvalidEventError on every path, before any store call: never a replay,
// another answer or a record. The event below has an order_id that a
// search trusting the event would find, after a broken literal.
func TestMalformedEvent(t *testing.T) {
	t.Parallel()
	const malformed = `{"amount": tru, "order_id":"o-1"}`
	const valid = `{"order_id":"o-1","amount":5}`
	tests := []struct {
		name      string
		opts      []idempotency.Option
		store     func(s *idempotencytest.Store) idempotency.Store
		seed      func(t *testing.T, f *fixture) // before the malformed event
		event     string
		wantState idempotency.Status // of keyOf("o-1") at the end; "" for none
	}{
		{
			name:  "new key: no record",
			event: malformed,
		},
		{
			name: "COMPLETE record: no replay",
			seed: func(t *testing.T, f *fixture) {
				if _, err := f.invoke(t, valid); err != nil {
					t.Fatal(err)
				}
			},
			event:     malformed,
			wantState: idempotency.StatusComplete,
		},
		{
			name: "local cache hit: no replay",
			opts: []idempotency.Option{idempotency.WithLocalCache(8)},
			seed: func(t *testing.T, f *fixture) {
				if _, err := f.invoke(t, valid); err != nil {
					t.Fatal(err)
				}
			},
			event:     malformed,
			wantState: idempotency.StatusComplete,
		},
		{
			name: "live IN_PROGRESS record: no InProgressError",
			seed: func(t *testing.T, f *fixture) {
				f.store.Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusInProgress,
					Expiry: f.clock.Now().Add(time.Hour), LeaseEnd: f.clock.Now().Add(time.Minute), LeaseToken: "other"})
			},
			event:     malformed,
			wantState: idempotency.StatusInProgress,
		},
		{
			name:  "key required and none found: no MissingKeyError",
			opts:  []idempotency.Option{idempotency.WithKeyRequired(true)},
			event: `{"amount": tru}`,
		},
		{
			name: "store failure: no PersistenceError",
			store: func(s *idempotencytest.Store) idempotency.Store {
				return &failingStore{Store: s, fail: map[string]error{"acquire": errors.New("unreachable")}}
			},
			event: malformed,
		},
		{
			name:  "truncated event",
			event: `{"order_id":"o-1"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replays := 0
			opts := append([]idempotency.Option{idempotency.WithReplayHook(func(_ context.Context, out receipt, _ *idempotency.Record) (receipt, error) {
				replays++
				return out, nil
			})}, tt.opts...)
			f := newFixture(t, nil, opts...)
			if tt.store != nil {
				f.h = idempotency.Wrap(tt.store(f.store), func(_ context.Context, o order) (receipt, error) {
					f.calls.Add(1)
					return receipt{OrderID: o.OrderID}, nil
				}, append([]idempotency.Option{idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"), idempotency.WithClock(f.clock.Now)}, opts...)...)
			}
			if tt.seed != nil {
				tt.seed(t, f)
			}
			runs := f.calls.Load()
			before := f.store.Counts()

			resp, err := f.invoke(t, tt.event)
			var invalid *idempotency.InvalidEventError
			var syntaxErr *strictjson.SyntaxError
			if !errors.As(err, &invalid) || !errors.As(err, &syntaxErr) {
				t.Fatalf("Invoke = %q, %v; want an *InvalidEventError for a *strictjson.SyntaxError", resp, err)
			}
			if after := f.store.Counts(); after != before {
				t.Errorf("store calls %+v, then %+v; want none", before, after)
			}
			if f.calls.Load() != runs || replays != 0 {
				t.Errorf("handler runs %d, replays %d; want none", f.calls.Load()-runs, replays)
			}
			var state idempotency.Status
			if rec, err := f.store.Get(context.Background(), keyOf("o-1")); err == nil {
				state = rec.Status
			}
			if state != tt.wantState {
				t.Errorf("record state %q, want %q", state, tt.wantState)
			}
		})
	}
}
