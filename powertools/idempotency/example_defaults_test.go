package idempotency_test

import (
	"context"
	"fmt"
	"os"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// A key path given in WithDefaults is the one unit tests and local runs
// use; the function's environment (its entry in template.yaml) overrides
// it per deployment, without a change of code.
func ExampleWithDefaults() {
	charge := func(_ context.Context, event map[string]any) (string, error) { return "charged", nil }
	build := func() *idempotency.Handler {
		return idempotency.Wrap(idempotencytest.NewStore(), charge,
			idempotency.WithKeyPrefix("payments"),
			idempotency.WithDefaults(idempotency.WithEventKey("order_id")))
	}
	event := []byte(`{"order_id":"o-1","payment_id":"p-7"}`)

	key, _, _ := build().KeyOf(event)
	fmt.Println("from the default, order_id:", key)

	os.Setenv("POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH", "payment_id")
	defer os.Unsetenv("POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH")
	key, _, _ = build().KeyOf(event)
	fmt.Println("from the environment, payment_id:", key)
	// Output:
	// from the default, order_id: payments#00d5c8b71f851bbe47626a189b20fb19c11753e244bb658095c370ba3798f85c
	// from the environment, payment_id: payments#6b6cb0614b44f3c445e2706c767e079168ca4d05c35b7a03656753c70a7bb031
}
