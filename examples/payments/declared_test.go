package main

import (
	"log/slog"
	"testing"

	"github.com/gopowertools/lambda/examples/internal/template"
)

// TestTemplateDeclaresTheCode: template.yaml's Metadata.Idempotency
// declares what appOptions gives the middleware outright (a key is
// required), so that `idempotency inspect` and `lint` compute the keys,
// and refuse the requests, as the function does.
func TestTemplateDeclaresTheCode(t *testing.T) {
	events := [][]byte{
		[]byte(`{"version":"2.0","requestContext":{"requestId":"r-1"},"body":"{\"order_id\":\"p-1\",\"amount\":100,\"currency\":\"EUR\"}"}`),
		[]byte(`{"version":"2.0","requestContext":{"requestId":"r-2"},"body":"{\"order_id\":\"p-1\",\"amount\":99,\"currency\":\"EUR\"}"}`),
		[]byte(`{"version":"2.0","requestContext":{"requestId":"r-3"},"body":"{\"amount\":100,\"currency\":\"EUR\"}"}`),
	}
	template.CheckDeclared(t, template.Repository(), "PaymentsFunction", events, template.Handler(appOptions(slog.New(slog.DiscardHandler))...))
}
