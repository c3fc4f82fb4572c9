package idempotency_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// A charge that times out after the provider received it is uncertain: the
// key is kept, and the next delivery asks the provider instead of charging
// again.
func ExampleWithReconcile() {
	charged := map[string]string{} // the provider's charges, by idempotency key
	timeout := true
	charge := func(ctx context.Context, cents int) (string, error) {
		key, _ := idempotency.KeyFromContext(ctx)
		charged[key] = "ch_1"
		if timeout {
			timeout = false
			return "", idempotency.Uncertain(errors.New("provider: timeout"))
		}
		return charged[key], nil
	}
	lookup := func(_ context.Context, key string) (string, bool, error) {
		id, ok := charged[key]
		return id, ok, nil
	}
	pay := idempotency.WrapFunc("pay", idempotencytest.NewStore(), charge, idempotency.WithReconcile(lookup))

	_, err := pay(context.Background(), 100)
	fmt.Println("first:", errors.As(err, new(*idempotency.UncertainError)))
	id, err := pay(context.Background(), 100)
	fmt.Println("retry:", id, err, "charges:", len(charged))
	// Output:
	// first: true
	// retry: ch_1 <nil> charges: 1
}
