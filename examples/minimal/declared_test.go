package main

import (
	"maps"
	"testing"

	"github.com/gopowertools/lambda/examples/internal/template"
)

// TestTemplateDeclaresTheCode: template.yaml's Metadata.Idempotency
// declares every option the function gives idempotency.Wrap outright, with its
// value. Without PayloadValidation, `idempotency inspect` would tell an
// operator that an order id reused with another amount gets the stored
// response, where the function answers a *PayloadConflictError.
func TestTemplateDeclaresTheCode(t *testing.T) {
	t.Parallel()
	code := template.LiteralOptions(t, "main.go")
	declared := template.Declared(t, "template.yaml", "OrderFunction")
	if len(code) == 0 || !maps.Equal(code, declared) {
		t.Errorf("main.go gives %v, template.yaml's OrderFunction declares %v in Metadata.Idempotency", code, declared)
	}
}
