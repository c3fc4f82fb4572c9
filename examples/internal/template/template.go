// Package template reads the repository's template.yaml for the examples'
// tests: what a function's environment holds in the deployed stack.
package template

import (
	"fmt"
	"os"
	"testing"

	"gopkg.in/yaml.v3"
)

// Variables returns the plain (untagged) environment variables that
// template.yaml gives the function resource logicalID.
func Variables(logicalID string) (map[string]string, error) {
	return VariablesOf(Repository(), logicalID)
}

// VariablesOf returns the plain (untagged) environment variables that the
// template at path gives the function resource logicalID.
func VariablesOf(path, logicalID string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	vars := Lookup(doc.Content[0], "Resources", logicalID, "Properties", "Environment", "Variables")
	if vars == nil || vars.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: no Environment.Variables for %s", path, logicalID)
	}
	out := map[string]string{}
	for i := 0; i+1 < len(vars.Content); i += 2 {
		if v := vars.Content[i+1]; v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
			out[vars.Content[i].Value] = v.Value
		}
	}
	return out, nil
}

// Lookup follows keys through mappings from n; nil when one is missing.
func Lookup(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

// CheckKeyPaths fails t unless template.yaml gives the function logicalID,
// through its environment, the key and validation paths its code has: the
// ones a local run uses. The two must not drift apart.
func CheckKeyPaths(t testing.TB, logicalID, key, validation string) {
	t.Helper()
	vars, err := Variables(logicalID)
	if err != nil {
		t.Fatal(err)
	}
	for variable, want := range map[string]string{
		"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH":          key,
		"POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH": validation,
	} {
		if got := vars[variable]; got != want {
			t.Errorf("template.yaml sets %s=%q for %s, the code %q", variable, got, logicalID, want)
		}
	}
}
