package main

import (
	"testing"

	"github.com/gopowertools/lambda/examples/internal/template"
)

// TestKeyPathsInTemplate checks that template.yaml gives the function the
// key paths of its code.
func TestKeyPathsInTemplate(t *testing.T) {
	t.Parallel()
	template.CheckKeyPaths(t, "PaymentsFunction", eventKeyPath, validationPath)
}
