package idempotency_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// A *Handler is what lambda.Start takes.
var _ lambda.Handler = (*idempotency.Handler)(nil)

func TestResponseBytesMatchAWSLambdaGo(t *testing.T) {
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

// countingEvent is an event type that counts its decodes.
type countingEvent struct{}

func (*countingEvent) UnmarshalJSON([]byte) error {
	eventDecodes.Add(1)
	return nil
}

func TestReplayDoesNotDecodeTheEvent(t *testing.T) {
	eventDecodes.Store(0)
	h := idempotency.Wrap(idempotencytest.NewStore(), func(context.Context, countingEvent) (string, error) {
		return "ok", nil
	}, idempotency.WithKeyPrefix("p"), idempotency.WithEventKey("id"))
	for range 3 {
		if _, err := h.Invoke(context.Background(), []byte(`{"id":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	if n := eventDecodes.Load(); n != 1 {
		t.Errorf("event decoded %d times, want once: replays use the raw bytes", n)
	}
}
