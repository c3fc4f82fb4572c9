package main

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

func TestFulfilRunsOncePerOrder(t *testing.T) {
	calls := 0
	h := idempotency.Wrap(idempotencytest.NewStore(),
		func(ctx context.Context, o Order) (Receipt, error) {
			calls++
			return fulfil(ctx, o)
		},
		idempotency.WithKeyPrefix("test"), // no AWS_LAMBDA_FUNCTION_NAME in a test
		idempotency.WithEventKey("order_id"),
		idempotency.WithPayloadValidation("amount"),
	)
	ctx := context.Background()

	first, err := h.Invoke(ctx, []byte(`{"order_id":"o-1","amount":100}`))
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.Invoke(ctx, []byte(`{"amount":100,"order_id":"o-1"}`))
	if err != nil || !bytes.Equal(again, first) {
		t.Errorf("duplicate = %s, %v; want the first response %s", again, err, first)
	}
	if _, err := h.Invoke(ctx, []byte(`{"order_id":"o-1","amount":999}`)); !errors.As(err, new(*idempotency.PayloadConflictError)) {
		t.Errorf("another amount: %v, want a PayloadConflictError", err)
	}
	if calls != 1 {
		t.Errorf("fulfil ran %d times, want 1", calls)
	}
}
