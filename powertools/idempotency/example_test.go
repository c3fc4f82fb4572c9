package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gopowertools/lambda/jmespath"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// A handler for API Gateway events keyed on the order_id in the JSON body.
// Under Lambda, pass h to lambda.Start and use dynamo.New for the store.
func ExampleWrap() {
	type request struct {
		Body string `json:"body"`
	}
	type response struct {
		StatusCode int    `json:"statusCode"`
		Body       string `json:"body"`
	}
	charges := 0
	h := idempotency.Wrap(idempotencytest.NewStore(),
		func(ctx context.Context, req request) (response, error) {
			charges++
			return response{StatusCode: 201, Body: `{"charged":true}`}, nil
		},
		idempotency.WithKeyPrefix("payments"), // default: AWS_LAMBDA_FUNCTION_NAME
		idempotency.WithEventKey("powertools_json(body).order_id"),
	)

	event := []byte(`{"body":"{\"order_id\":\"o-1\",\"amount\":5}"}`)
	for range 2 {
		out, err := h.Invoke(context.Background(), event)
		fmt.Println(string(out), err)
	}
	fmt.Println("charges:", charges)
	// Output:
	// {"statusCode":201,"body":"{\"charged\":true}"} <nil>
	// {"statusCode":201,"body":"{\"charged\":true}"} <nil>
	// charges: 1
}

// A function called from a handler, made idempotent on its argument: a
// retried invocation does not charge the customer twice.
func ExampleWrapFunc() {
	type charge struct {
		Customer string `json:"customer"`
		Cents    int    `json:"cents"`
	}
	calls := 0
	pay := idempotency.WrapFunc("pay", idempotencytest.NewStore(),
		func(ctx context.Context, c charge) (string, error) {
			calls++
			return fmt.Sprintf("ch_%d", calls), nil
		})

	for range 2 {
		id, err := pay(context.Background(), charge{Customer: "alice", Cents: 500})
		fmt.Println(id, err)
	}
	// Output:
	// ch_1 <nil>
	// ch_1 <nil>
}

// Payload validation tells a retry from a different request that reuses the
// key: the second event has the same order_id but another amount.
func ExampleWithPayloadValidation() {
	h := idempotency.Wrap(idempotencytest.NewStore(),
		func(ctx context.Context, in map[string]any) (string, error) { return "ok", nil },
		idempotency.WithKeyPrefix("payments"),
		idempotency.WithEventKey("order_id"),
		idempotency.WithPayloadValidation("amount"),
	)
	_, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-1","amount":5}`))
	fmt.Println(err)
	_, err = h.Invoke(context.Background(), []byte(`{"order_id":"o-1","amount":9}`))
	fmt.Println(errors.As(err, new(*idempotency.PayloadConflictError)))
	// Output:
	// <nil>
	// true
}

// The handler passes its idempotency key on to a downstream API, so that a
// retried invocation is deduplicated there too. The key is the prefix and
// the SHA-256 of the selected value's canonical JSON, here "o-1".
func ExampleKeyFromContext() {
	h := idempotency.Wrap(idempotencytest.NewStore(),
		func(ctx context.Context, in map[string]any) (string, error) {
			key, _ := idempotency.KeyFromContext(ctx)
			// req.Header.Set("Idempotency-Key", key)
			return key, nil
		},
		idempotency.WithKeyPrefix("payments"),
		idempotency.WithEventKey("order_id"),
	)
	out, _ := h.Invoke(context.Background(), []byte(`{"order_id":"o-1"}`))
	fmt.Println(string(out))
	// Output:
	// "payments#00d5c8b71f851bbe47626a189b20fb19c11753e244bb658095c370ba3798f85c"
}

// A custom JMESPath function in the key expression: order ids that differ
// only in case are one order.
func ExampleWithJMESPath() {
	lower := jmespath.Function{
		Name:   "lower",
		Params: []jmespath.Param{{Types: jmespath.TypeString}},
		Call:   func(args []any) (any, error) { return strings.ToLower(args[0].(string)), nil },
	}
	charges := 0
	h := idempotency.Wrap(idempotencytest.NewStore(),
		func(ctx context.Context, order struct{ ID string }) (string, error) {
			charges++
			return "charged " + order.ID, nil
		},
		idempotency.WithKeyPrefix("payments"),
		idempotency.WithEventKey("lower(id)"),
		idempotency.WithJMESPath(jmespath.WithFunctions(lower)),
	)
	for _, event := range []string{`{"id":"ORD-1"}`, `{"id":"ord-1"}`} {
		out, err := h.Invoke(context.Background(), []byte(event))
		fmt.Println(string(out), err)
	}
	fmt.Println("charges:", charges)
	// Output:
	// "charged ORD-1" <nil>
	// "charged ORD-1" <nil>
	// charges: 1
}
