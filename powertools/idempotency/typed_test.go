package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

func TestTypedCall(t *testing.T) {
	runs := 0
	charge := func(_ context.Context, o order) (receipt, error) {
		runs++
		return receipt{OrderID: o.OrderID, Charged: o.Amount}, nil
	}
	tests := []struct {
		name         string
		opts         []idempotency.Option
		wantRuns     int
		wantReplayed bool
		wantReplay   receipt
	}{
		{"replay", nil, 1, true, receipt{OrderID: "o-1", Charged: 5}},
		{"replay through the hook", []idempotency.Option{idempotency.WithReplayHook(func(_ context.Context, r receipt, _ *idempotency.Record) (receipt, error) {
			r.OrderID += " (replayed)"
			return r, nil
		})}, 1, true, receipt{OrderID: "o-1 (replayed)", Charged: 5}},
		{"disabled", []idempotency.Option{idempotency.WithDisabled(true)}, 2, false, receipt{OrderID: "o-1", Charged: 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runs = 0
			opts := append([]idempotency.Option{idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id")}, tc.opts...)
			h, err := idempotency.NewTyped(idempotencytest.NewStore(), charge, opts...)
			if err != nil {
				t.Fatal(err)
			}
			event := []byte(`{"order_id":"o-1","amount":5}`)
			first, replayed, err := h.Call(context.Background(), event)
			if err != nil || replayed || first != (receipt{OrderID: "o-1", Charged: 5}) {
				t.Fatalf("first Call = %+v, %v, %v; want the receipt, fresh", first, replayed, err)
			}
			again, replayed, err := h.Call(context.Background(), event)
			if err != nil || replayed != tc.wantReplayed || again != tc.wantReplay {
				t.Errorf("second Call = %+v, %v, %v; want %+v, replayed %v", again, replayed, err, tc.wantReplay, tc.wantReplayed)
			}
			if runs != tc.wantRuns {
				t.Errorf("handler ran %d times, want %d", runs, tc.wantRuns)
			}
			// Invoke, the byte-level handler for lambda.Start, is the same
			// handler: its call is one more replay, or one more run.
			if _, err := h.Invoke(context.Background(), event); err != nil || runs != tc.wantRuns+map[bool]int{true: 0, false: 1}[tc.wantReplayed] {
				t.Errorf("Invoke: %v, after %d runs", err, runs)
			}
		})
	}
}

func TestDecodingOptions(t *testing.T) {
	type loose struct {
		OrderID string `json:"order_id"`
		Extra   any    `json:"extra"`
	}
	var got any
	handler := func(_ context.Context, in loose) (string, error) {
		got = in.Extra
		return "ok", nil
	}
	t.Run("use number", func(t *testing.T) {
		h := idempotency.Wrap(idempotencytest.NewStore(), handler, idempotency.WithKeyPrefix(prefix),
			idempotency.WithEventKey("order_id"), idempotency.WithUseNumber(true))
		if _, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-1","extra":12345678901234567890}`)); err != nil {
			t.Fatal(err)
		}
		if n, ok := got.(json.Number); !ok || n != "12345678901234567890" {
			t.Errorf("the handler got %#v, want json.Number 12345678901234567890", got)
		}
	})
	t.Run("disallow unknown fields", func(t *testing.T) {
		store := idempotencytest.NewStore()
		h := idempotency.Wrap(store, handler, idempotency.WithKeyPrefix(prefix),
			idempotency.WithEventKey("order_id"), idempotency.WithDisallowUnknownFields(true))
		_, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-1","ammount":5}`))
		if err == nil || errors.As(err, new(*idempotency.InvalidEventError)) {
			t.Fatalf("Invoke = %v, want the decoding's error", err)
		}
		if _, err := store.Get(context.Background(), keyOf("o-1")); !errors.Is(err, idempotency.ErrRecordNotFound) {
			t.Errorf("record after the decoding failed: %v, want it released", err)
		}
	})
}

// Call returns the handler's result typed, and says whether it was a
// replay: what an HTTP adapter needs to set a header or a status.
func ExampleTyped_Call() {
	type order struct {
		ID     string `json:"id"`
		Amount int    `json:"amount"`
	}
	type charge struct {
		ID     string `json:"id"`
		Amount int    `json:"amount"`
	}
	h, err := idempotency.NewTyped(idempotencytest.NewStore(),
		func(_ context.Context, o order) (charge, error) {
			return charge{ID: "ch_" + o.ID, Amount: o.Amount}, nil
		},
		idempotency.WithKeyPrefix("payments"), idempotency.WithEventKey("id"), idempotency.WithKeyRequired(true))
	if err != nil {
		panic(err)
	}
	for range 2 {
		c, replayed, err := h.Call(context.Background(), []byte(`{"id":"o-1","amount":250}`))
		fmt.Println(c.ID, c.Amount, replayed, err)
	}
	// Output:
	// ch_o-1 250 false <nil>
	// ch_o-1 250 true <nil>
}

// TestTypedCallStoredResponseThatDoesNotDecode checks that a stored
// response that does not decode into Out is a *CorruptedRecordError, and
// that the observer hears of that, not of a replay.
func TestTypedCallStoredResponseThatDoesNotDecode(t *testing.T) {
	store := idempotencytest.NewStore()
	var seen []idempotency.Outcome
	h, err := idempotency.NewTyped(store, func(context.Context, order) (receipt, error) { return receipt{}, nil },
		idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"),
		idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) { seen = append(seen, o.Outcome) }))
	if err != nil {
		t.Fatal(err)
	}
	store.Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusComplete,
		Expiry: time.Now().Add(time.Hour), Response: []byte(`"not a receipt"`)})
	_, replayed, err := h.Call(context.Background(), []byte(`{"order_id":"o-1"}`))
	if !errors.As(err, new(*idempotency.CorruptedRecordError)) || !replayed {
		t.Errorf("Call = %v, replayed %v; want a CorruptedRecordError from a replay", err, replayed)
	}
	if len(seen) != 1 || seen[0] != idempotency.OutcomeStoreError {
		t.Errorf("observed %v, want [store_error]", seen)
	}
}
