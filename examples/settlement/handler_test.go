package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

func TestInvalidEventLeavesNoRecord(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "settlement")
	tests := []struct {
		name   string
		detail string
	}{
		{"not JSON", `"x"`},
		{"no settlement id", `{"account_id":"a","amount_cents":1,"currency":"EUR"}`},
		{"no account", `{"settlement_id":"s","amount_cents":1,"currency":"EUR"}`},
		{"zero amount", `{"settlement_id":"s","account_id":"a","amount_cents":0,"currency":"EUR"}`},
		{"bad currency", `{"settlement_id":"s","account_id":"a","amount_cents":1,"currency":"euro"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := idempotencytest.NewStore()
			app, err := NewApp(store, "ledger", slog.New(slog.DiscardHandler), appOptions(slog.New(slog.DiscardHandler))...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = app.Handle(context.Background(), events.EventBridgeEvent{Detail: json.RawMessage(tt.detail)})
			if _, ok := errors.AsType[*InvalidSettlementError](err); !ok {
				t.Errorf("Handle: %v, want an *InvalidSettlementError", err)
			}
			if n := len(store.Records()); n != 0 {
				t.Errorf("%d records left, want none", n)
			}
		})
	}
}

// TestNeedsATransactionalStore: on a store that cannot commit staged
// writes, the movement is refused rather than written on its own.
func TestNeedsATransactionalStore(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "settlement")
	app, err := NewApp(idempotencytest.NewStore(), "ledger", slog.New(slog.DiscardHandler), appOptions(slog.New(slog.DiscardHandler))...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = app.Handle(context.Background(), events.EventBridgeEvent{Detail: json.RawMessage(`{"settlement_id":"s","account_id":"a","amount_cents":1,"currency":"EUR"}`)})
	if !errors.Is(err, dynamo.ErrNotInInvocation) {
		t.Errorf("Handle: %v, want dynamo.ErrNotInInvocation", err)
	}
}
