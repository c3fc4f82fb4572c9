package idempotency_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// A *Handler is what lambda.Start takes.
var _ lambda.Handler = (*idempotency.Handler)(nil)

func TestResponseBytesMatchAWSLambdaGo(t *testing.T) {
	t.Parallel()
	// aws-lambda-go encodes responses without HTML escaping; wrapping a
	// handler must not change its bytes.
	fn := func(context.Context, struct{}) (map[string]string, error) {
		return map[string]string{"html": "<b>&</b>"}, nil
	}
	plain, err := lambda.NewHandler(fn).Invoke(context.Background(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	wrapped := idempotency.Wrap(idempotencytest.NewStore(), fn, idempotency.WithKeyPrefix("p"))
	for range 2 { // first call, then replay
		got, err := wrapped.Invoke(context.Background(), []byte(`{"k":1}`))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(plain) {
			t.Errorf("wrapped response %s, want aws-lambda-go's %s", got, plain)
		}
	}
}

// eventDecodes counts calls of countingEvent.UnmarshalJSON.
var eventDecodes atomic.Int32

// countingEvent is an event type whose decodes are counted: its Counted
// field decodes itself, and the key is beside it.
type countingEvent struct {
	ID      json.Number  `json:"id"`
	Counted countingPart `json:"counted"`
}

type countingPart struct{}

func (*countingPart) UnmarshalJSON([]byte) error {
	eventDecodes.Add(1)
	return nil
}

func TestReplayDoesNotDecodeTheEvent(t *testing.T) {
	t.Parallel()
	eventDecodes.Store(0)
	h := idempotency.Wrap(idempotencytest.NewStore(), func(context.Context, countingEvent) (string, error) {
		return "ok", nil
	}, idempotency.WithKeyPrefix("p"), idempotency.WithEventKey("id"))
	for range 3 {
		if _, err := h.Invoke(context.Background(), []byte(`{"id":1,"counted":{}}`)); err != nil {
			t.Fatal(err)
		}
	}
	if n := eventDecodes.Load(); n != 1 {
		t.Errorf("event decoded %d times, want once: replays use the raw bytes", n)
	}
}

// TestKeyOf checks that KeyOf gives the key and payload hash of the record
// Invoke writes for the same event, and Invoke's errors for events it
// refuses, without touching the store.
func TestKeyOf(t *testing.T) {
	t.Parallel()
	store := idempotencytest.NewStore()
	build := func(opts ...idempotency.Option) *idempotency.Handler {
		return idempotency.Wrap(store, func(_ context.Context, o order) (receipt, error) { return receipt{OrderID: o.OrderID}, nil },
			append([]idempotency.Option{idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"),
				idempotency.WithPayloadValidation("amount")}, opts...)...)
	}
	h := build()
	const event = `{"order_id":"o-1","amount":5}`
	key, hash, err := h.KeyOf([]byte(event))
	if err != nil || key != keyOf("o-1") || hash == "" || len(store.Records()) != 0 {
		t.Fatalf("KeyOf = %q, %q, %v with %d records; want %q, a hash, no error, no record", key, hash, err, len(store.Records()), keyOf("o-1"))
	}
	if _, err := h.Invoke(context.Background(), []byte(event)); err != nil {
		t.Fatal(err)
	}
	if recs := store.Records(); len(recs) != 1 || recs[0].Key != key || recs[0].PayloadHash != hash {
		t.Errorf("records %+v, want one with key %q and hash %q", recs, key, hash)
	}

	tests := []struct {
		name    string
		h       *idempotency.Handler
		event   string
		wantErr func(error) bool // nil: no key, no error
	}{
		{"no key", h, `{"amount":5}`, nil},
		{"no key, required", build(idempotency.WithKeyRequired(true)), `{"amount":5}`, isA[*idempotency.MissingKeyError]},
		{"ambiguous", h, `{"order_id":"o-1","ORDER_ID":"o-2"}`, isA[*idempotency.InvalidEventError]},
		{"not JSON", h, `{"order_id":`, isA[*idempotency.InvalidEventError]},
		{"zero Handler", &idempotency.Handler{}, event, isA[*idempotency.ConfigError]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, hash, err := tt.h.KeyOf([]byte(tt.event))
			switch {
			case tt.wantErr == nil && (err != nil || key != "" || hash != ""):
				t.Errorf("KeyOf = %q, %q, %v; want no key and no error", key, hash, err)
			case tt.wantErr != nil && (!tt.wantErr(err) || key != ""):
				t.Errorf("KeyOf = %q, %v; want no key and another error", key, err)
			}
		})
	}
}
