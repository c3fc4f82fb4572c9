package main

import (
	"testing"

	"github.com/gopowertools/lambda/examples/internal/template"
)

// TestKeyPathsInTemplate checks that the key paths template.yaml gives the
// function through its environment are the ones in its code, which a
// local run uses: the two must not drift apart.
func TestKeyPathsInTemplate(t *testing.T) {
	vars, err := template.Variables("SettlementFunction")
	if err != nil {
		t.Fatal(err)
	}
	for variable, want := range map[string]string{
		"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH":          eventKeyPath,
		"POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH": validationPath,
	} {
		if got := vars[variable]; got != want {
			t.Errorf("template.yaml sets %s=%q for SettlementFunction, the code %q", variable, got, want)
		}
	}
}
