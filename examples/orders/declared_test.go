package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/gopowertools/lambda/examples/internal/template"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// TestTemplateDeclaresTheCode: template.yaml's Metadata.Idempotency
// declares the function wrapper that NewApp builds, so that `idempotency
// inspect` and `lint` compute its keys as it does.
func TestTemplateDeclaresTheCode(t *testing.T) {
	var events [][]byte
	for _, o := range []Order{
		{OrderID: "o-1", Customer: "c-1", Amount: 1250, Currency: "EUR"},
		{OrderID: "o-1", Customer: "c-1", Amount: 99, Currency: "EUR"},
		{OrderID: "o-2", Customer: "c-2", Amount: 1, Currency: "USD"},
	} {
		ev, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	template.CheckDeclared(t, template.Repository(), "OrdersFunction", events, func(s idempotency.Store) (template.Deliver, error) {
		app, err := NewApp(s, &FulfilmentClient{}, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, ev []byte) error {
			var o Order
			if err := json.Unmarshal(ev, &o); err != nil {
				return err
			}
			_, err := app.fulfil(ctx, o)
			return err
		}, nil
	})
}
