package idempotency_test

import (
	"context"
	"fmt"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// A Go handler that shares its records with the Powertools handler it
// replaces computes the keys Powertools computes for the same event (the
// ones below are Powertools Python's and TypeScript's).
// Here the key prefixes are given outright; in Lambda they come from
// AWS_LAMBDA_FUNCTION_NAME (and, for Python, WithPythonHandler).
func ExampleWithCompatibility() {
	charge := func(ctx context.Context, o struct {
		OrderID string `json:"order_id"`
	}) (string, error) {
		return "charged " + o.OrderID, nil
	}
	event := []byte(`{"order_id":"ord-1","amount":1250}`)

	python := idempotency.Wrap(idempotencytest.NewStore(), charge,
		idempotency.WithCompatibility(idempotency.PowertoolsPython),
		idempotency.WithKeyPrefix("orders.app.lambda_handler"), // Python's <function>.<module>.<handler>
		idempotency.WithEventKey("order_id"))
	key, _, _ := python.KeyOf(event)
	fmt.Println(key)

	typeScript := idempotency.Wrap(idempotencytest.NewStore(), charge,
		idempotency.WithCompatibility(idempotency.PowertoolsTypeScript),
		idempotency.WithKeyPrefix("orders"), // TypeScript's: the function's name
		idempotency.WithEventKey("order_id"))
	key, _, _ = typeScript.KeyOf(event)
	fmt.Println(key)
	// Output:
	// orders.app.lambda_handler#61e3bf14710bf17addee41c74ca14d61
	// orders#YeO/FHEL8Xrd7kHHTKFNYQ==
}
