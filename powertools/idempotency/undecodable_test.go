package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// TestUndecodableEvent: an event whose key and payload read, but which
// does not decode into the handler's input type, gets an
// *UndecodableEventError and its own outcome, without running the
// handler; its key is released, so the record of an event that cannot
// run blocks nothing; and a duplicate of a completed request replays the
// stored response, which needs no decoding.
func TestUndecodableEvent(t *testing.T) {
	t.Parallel()
	store := idempotencytest.NewStore()
	ran := 0
	var outcomes []idempotency.Outcome
	h := idempotency.Wrap(store, func(_ context.Context, o order) (receipt, error) {
		ran++
		return receipt{OrderID: o.OrderID, Charged: o.Amount}, nil
	}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"),
		idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) { outcomes = append(outcomes, o.Outcome) }))

	_, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-5","amount":"abc"}`))
	e, ok := errors.AsType[*idempotency.UndecodableEventError](err)
	if !ok {
		t.Fatalf("err = %v (%T), want *UndecodableEventError", err, err)
	}
	if _, ok := errors.AsType[*json.UnmarshalTypeError](err); !ok || e.Type != "idempotency_test.order" {
		t.Errorf("err = %+v: want the type idempotency_test.order and encoding/json's error", e)
	}
	if ran != 0 || outcomes[0] != idempotency.OutcomeUndecodableEvent {
		t.Errorf("ran %d times, outcome %v", ran, outcomes)
	}
	if recs := store.Records(); len(recs) != 0 {
		t.Errorf("the key is held after an undecodable event: %+v", recs)
	}

	// The same key, once completed: an undecodable duplicate replays.
	want, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-5","amount":5}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-5","amount":"abc"}`))
	if err != nil || string(got) != string(want) || outcomes[len(outcomes)-1] != idempotency.OutcomeReplayed {
		t.Errorf("duplicate = %s, %v (%v), want the replay of %s", got, err, outcomes, want)
	}

	// A disabled handler says the same, without a record.
	off := idempotency.Wrap(store, func(context.Context, order) (receipt, error) { return receipt{}, nil },
		idempotency.WithKeyPrefix(prefix), idempotency.WithDisabled(true), idempotency.WithClock(time.Now))
	if _, err := off.Invoke(context.Background(), []byte(`{"amount":"abc"}`)); !isA[*idempotency.UndecodableEventError](err) {
		t.Errorf("disabled: err = %v (%T)", err, err)
	}
}
