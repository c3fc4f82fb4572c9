package main

import (
	"log/slog"
	"testing"

	"github.com/gopowertools/lambda/examples/internal/template"
)

// TestTemplateDeclaresTheCode: template.yaml's Metadata.Idempotency
// declares what appOptions gives the middleware outright (a key is
// required), so that `idempotency inspect` and `lint` compute the keys,
// and refuse the events, as the function does.
func TestTemplateDeclaresTheCode(t *testing.T) {
	events := [][]byte{
		[]byte(`{"id":"e-1","detail-type":"Settlement","detail":{"settlement_id":"s-1","account_id":"a-1","amount_cents":500,"currency":"EUR"}}`),
		[]byte(`{"id":"e-2","detail-type":"Settlement","detail":{"settlement_id":"s-1","account_id":"a-2","amount_cents":500,"currency":"EUR"}}`),
		[]byte(`{"id":"e-3","detail-type":"Settlement","detail":{"account_id":"a-1","amount_cents":500,"currency":"EUR"}}`),
	}
	template.CheckDeclared(t, template.Repository(), "SettlementFunction", events, template.Handler(appOptions(slog.New(slog.DiscardHandler))...))
}
