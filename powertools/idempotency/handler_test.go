package idempotency_test

import (
	"context"
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
