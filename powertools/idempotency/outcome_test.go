package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// TestObserverOutcomes checks that WithObserver is told each outcome, with
// the key and the error the caller got and whether the handler ran (as
// the handler counts its own calls), and that an error the middleware
// makes is exactly one of the package's error types (docs/errors.md).
func TestObserverOutcomes(t *testing.T) {
	t.Parallel()
	errDeclined := errors.New("declined")
	calls := 0
	handler := func(_ context.Context, o order) (receipt, error) {
		calls++
		switch o.Amount {
		case -1:
			return receipt{}, errDeclined
		case -2:
			return receipt{}, idempotency.Uncertain(errDeclined)
		case -3:
			return receipt{OrderID: strings.Repeat("x", 2000)}, nil
		}
		return receipt{OrderID: o.OrderID, Charged: o.Amount}, nil
	}
	tests := []struct {
		name   string
		opts   []idempotency.Option
		store  func(*idempotencytest.Store) idempotency.Store
		seed   []string // events sent first, not observed
		event  string
		want   idempotency.Outcome
		keyed  bool
		failed bool
		// the handler's own error: none of the package's types
		handlerErr bool
	}{
		{name: "first call", event: `{"order_id":"o-1","amount":1}`, want: idempotency.OutcomeNew, keyed: true},
		{name: "replay", seed: []string{`{"order_id":"o-1","amount":1}`}, event: `{"order_id":"o-1","amount":1}`, want: idempotency.OutcomeReplayed, keyed: true},
		{name: "payload conflict", opts: []idempotency.Option{idempotency.WithPayloadValidation("amount")},
			seed: []string{`{"order_id":"o-1","amount":1}`}, event: `{"order_id":"o-1","amount":2}`, want: idempotency.OutcomeConflict, keyed: true, failed: true},
		{name: "handler error", event: `{"order_id":"o-1","amount":-1}`, want: idempotency.OutcomeReleased, keyed: true, failed: true, handlerErr: true},
		{name: "uncertain", event: `{"order_id":"o-1","amount":-2}`, want: idempotency.OutcomeUncertain, keyed: true, failed: true},
		{name: "store error", store: func(s *idempotencytest.Store) idempotency.Store {
			return &failingStore{Store: s, fail: map[string]error{"acquire": errors.New("unreachable")}}
		}, event: `{"order_id":"o-1","amount":1}`, want: idempotency.OutcomeStoreError, keyed: true, failed: true},
		{name: "lease lost", store: func(s *idempotencytest.Store) idempotency.Store {
			return &failingStore{Store: s, fail: map[string]error{"complete": fmt.Errorf("fake: %w", idempotency.ErrLeaseLost)}}
		}, event: `{"order_id":"o-1","amount":1}`, want: idempotency.OutcomeLeaseLost, keyed: true},
		{name: "corrupted record", store: func(s *idempotencytest.Store) idempotency.Store {
			s.Put(&idempotency.Record{Key: keyOf("o-1"), Status: "PAUSED", Expiry: time.Now().Add(time.Hour)})
			return s
		}, event: `{"order_id":"o-1","amount":1}`, want: idempotency.OutcomeStoreError, keyed: true, failed: true},
		{name: "in progress", store: func(s *idempotencytest.Store) idempotency.Store {
			s.Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusInProgress, Expiry: time.Now().Add(time.Hour), LeaseEnd: time.Now().Add(time.Hour), LeaseToken: "other"})
			return s
		}, event: `{"order_id":"o-1","amount":1}`, want: idempotency.OutcomeInProgress, keyed: true, failed: true},
		{name: "uncertain duplicate", seed: []string{`{"order_id":"o-1","amount":-2}`}, event: `{"order_id":"o-1","amount":-2}`, want: idempotency.OutcomeUncertain, keyed: true, failed: true},
		{name: "response not stored", store: func(s *idempotencytest.Store) idempotency.Store {
			s.SetMaxItemSize(1000)
			return s
		}, seed: []string{`{"order_id":"o-1","amount":-3}`}, event: `{"order_id":"o-1","amount":-3}`, want: idempotency.OutcomeNotStored, keyed: true, failed: true},
		{name: "invalid event", event: `{"order_id":"o-1","ORDER_ID":"o-2"}`, want: idempotency.OutcomeInvalidEvent, failed: true},
		{name: "missing key", opts: []idempotency.Option{idempotency.WithKeyRequired(true)}, event: `{"amount":1}`, want: idempotency.OutcomeMissingKey, failed: true},
		{name: "no key", event: `{"amount":1}`, want: idempotency.OutcomeNoKey},
		{name: "no key, handler error", event: `{"amount":-1}`, want: idempotency.OutcomeNoKey, failed: true, handlerErr: true},
		{name: "undecodable event", event: `{"order_id":"o-1","amount":"abc"}`, want: idempotency.OutcomeUndecodableEvent, keyed: true, failed: true},
		{name: "undecodable event, no key", event: `{"amount":"abc"}`, want: idempotency.OutcomeUndecodableEvent, failed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := idempotencytest.NewStore()
			var store idempotency.Store = mem
			if tc.store != nil {
				store = tc.store(mem)
			}
			var seen []idempotency.Observation
			opts := append([]idempotency.Option{idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"),
				idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) { seen = append(seen, o) })}, tc.opts...)
			h := idempotency.Wrap(store, handler, opts...)
			for _, ev := range tc.seed {
				h.Invoke(context.Background(), []byte(ev))
			}
			seen, calls = nil, 0
			_, err := h.Invoke(context.Background(), []byte(tc.event))
			if len(seen) != 1 {
				t.Fatalf("observed %d invocations, want 1: %+v", len(seen), seen)
			}
			o := seen[0]
			if o.Outcome != tc.want || (o.Key != "") != tc.keyed || o.Err != err || (err != nil) != tc.failed {
				t.Errorf("observed %+v for err %v; want outcome %s, keyed %v, failed %v", o, err, tc.want, tc.keyed, tc.failed)
			}
			if o.HandlerRan != (calls > 0) {
				t.Errorf("observed HandlerRan %v; the handler ran %d times", o.HandlerRan, calls)
			}
			if n, want := errorTypes(err), b2i(tc.failed && !tc.handlerErr); n != want {
				t.Errorf("err %v (%T) is %d of the package's error types, want %d", err, err, n, want)
			}
		})
	}
}

// errorTypes counts the package's caller-facing error types that err
// matches with errors.As.
func errorTypes(err error) int {
	matches := []bool{
		isA[*idempotency.InProgressError](err),
		isA[*idempotency.PayloadConflictError](err),
		isA[*idempotency.MissingKeyError](err),
		isA[*idempotency.InvalidEventError](err),
		isA[*idempotency.PersistenceError](err),
		isA[*idempotency.CorruptedRecordError](err),
		isA[*idempotency.ResponseNotStoredError](err),
		isA[*idempotency.UncertainError](err),
		isA[*idempotency.ConfigError](err),
		isA[*idempotency.AbandonedError](err),
		isA[*idempotency.UndecodableEventError](err),
	}
	n := 0
	for _, m := range matches {
		n += b2i(m)
	}
	return n
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestObserverReplayAge checks that a replay's observation says when the
// replayed response was stored, from the store and from the local cache,
// and that no other outcome does.
func TestObserverReplayAge(t *testing.T) {
	t.Parallel()
	for _, cached := range []bool{false, true} {
		f := newFixture(t, nil)
		var seen []idempotency.Observation
		opts := []idempotency.Option{idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"), idempotency.WithClock(f.clock.Now),
			idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) { seen = append(seen, o) })}
		if cached {
			opts = append(opts, idempotency.WithLocalCache(10))
		}
		h := idempotency.Wrap(f.store, func(_ context.Context, o order) (receipt, error) { return receipt{OrderID: o.OrderID}, nil }, opts...)
		stored := f.clock.Now()
		for range 2 {
			if _, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-1"}`)); err != nil {
				t.Fatal(err)
			}
			f.clock.Advance(time.Minute)
		}
		if len(seen) != 2 || !seen[0].CompletedAt.IsZero() || seen[1].Outcome != idempotency.OutcomeReplayed || !seen[1].CompletedAt.Equal(stored) {
			t.Errorf("cache %v: observed %+v; want a first call without CompletedAt, then a replay stored at %v", cached, seen, stored)
		}
		if recs := f.store.Records(); len(recs) != 1 || !recs[0].CompletedAt.Equal(stored) {
			t.Errorf("cache %v: records %+v, want one with CompletedAt %v", cached, recs, stored)
		}
	}
}

// TestObserverEncodeFailure covers a function whose result cannot be
// encoded: its effect has happened, so the key completes without a
// response (OutcomeNew, with the encoding error), and a duplicate gets a
// ResponseNotStoredError (OutcomeNotStored), not a second run.
func TestObserverEncodeFailure(t *testing.T) {
	t.Parallel()
	var seen []idempotency.Observation
	runs := 0
	f := idempotency.WrapFunc("f", idempotencytest.NewStore(), func(_ context.Context, n int) (float64, error) {
		runs++
		return math.NaN(), nil // encoding/json cannot encode NaN
	}, idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) { seen = append(seen, o) }))
	_, first := f(context.Background(), 1)
	_, second := f(context.Background(), 1)
	if e, ok := errors.AsType[*idempotency.ResponseNotStoredError](second); runs != 1 || first == nil || !ok || e.Reason != idempotency.ReasonNotEncoded {
		t.Fatalf("runs %d, errors %v and %v; want 1 run, an encoding error, then a ResponseNotStoredError, not encoded", runs, first, second)
	}
	if len(seen) != 2 || seen[0].Outcome != idempotency.OutcomeNew || seen[0].Err != first || seen[1].Outcome != idempotency.OutcomeNotStored {
		t.Errorf("observed %+v, want new (with the encoding error), then not_stored", seen)
	}
}

// TestObserverInProgressAndFunctions covers the outcome of a duplicate
// that meets a live lease, and the outcomes of a function wrapper.
func TestObserverInProgressAndFunctions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	var seen []idempotency.Outcome
	observe := idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) { seen = append(seen, o.Outcome) })
	h := idempotency.Wrap(f.store, func(context.Context, order) (receipt, error) { return receipt{}, nil },
		idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"), idempotency.WithClock(f.clock.Now), observe)
	f.store.Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusInProgress,
		Expiry: f.clock.Now().Add(time.Hour), LeaseEnd: f.clock.Now().Add(time.Minute), LeaseToken: "other"})
	if _, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-1"}`)); !errors.As(err, new(*idempotency.InProgressError)) {
		t.Fatalf("err = %v, want an InProgressError", err)
	}
	double := idempotency.WrapFunc("double", idempotencytest.NewStore(), func(_ context.Context, n int) (int, error) { return 2 * n, nil }, observe)
	double(context.Background(), 2)
	double(context.Background(), 2)
	want := []idempotency.Outcome{idempotency.OutcomeInProgress, idempotency.OutcomeNew, idempotency.OutcomeReplayed}
	if len(seen) != len(want) || seen[0] != want[0] || seen[1] != want[1] || seen[2] != want[2] {
		t.Errorf("observed %v, want %v", seen, want)
	}
}

// TestObserverHandlerDuration checks that the observation says how long
// the handler ran, on the wrapper's clock, and nothing for a replay, and
// that the metrics document carries it.
func TestObserverHandlerDuration(t *testing.T) {
	t.Parallel()
	var seen []idempotency.Observation
	var metrics strings.Builder
	var f *fixture
	f = newFixture(t, func(_ context.Context, o order) (receipt, error) {
		f.clock.Advance(250 * time.Millisecond) // the handler's work
		return receipt{OrderID: o.OrderID}, nil
	}, idempotency.WithCloudWatchMetrics(&metrics, ""),
		idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) { seen = append(seen, o) }))
	for range 2 {
		if _, err := f.invoke(t, `{"order_id":"o-1"}`); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 2 || seen[0].HandlerDuration != 250*time.Millisecond || seen[1].HandlerDuration != 0 {
		t.Fatalf("observed %+v; want 250ms for the first call, none for the replay", seen)
	}
	docs := strings.Split(strings.TrimSpace(metrics.String()), "\n")
	if len(docs) != 2 || !strings.Contains(docs[0], `"IdempotencyHandlerDuration":250`) || strings.Contains(docs[1], "IdempotencyHandlerDuration") {
		t.Errorf("metrics documents:\n%s\nwant IdempotencyHandlerDuration 250 in the first only", metrics.String())
	}
}
