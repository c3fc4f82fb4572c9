package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/httpapi"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// An HTTP API route keyed on the Idempotency-Key header. Under Lambda,
// pass h to lambda.Start and use dynamo.New for the store.
func ExampleWrap() {
	charges := 0
	charge := func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		charges++
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusCreated, Body: `{"charge":"ch_1"}`}, nil
	}
	h := httpapi.Wrap(idempotencytest.NewStore(), charge,
		httpapi.WithKeyHeader(true),                                // required: a request without it gets 400
		httpapi.WithOptions(idempotency.WithKeyPrefix("payments")), // default: AWS_LAMBDA_FUNCTION_NAME
	)

	send := func(key, body string) {
		req := events.APIGatewayV2HTTPRequest{
			RawPath:        "/payments",
			RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST"}},
			Headers:        map[string]string{"content-type": "application/json"},
			Body:           body,
		}
		if key != "" {
			req.Headers["idempotency-key"] = key
		}
		resp, err := h(context.Background(), req)
		if err != nil {
			fmt.Println(err)
			return
		}
		if resp.Headers["Content-Type"] == "application/problem+json" {
			var p struct{ Title, Code string }
			_ = json.Unmarshal([]byte(resp.Body), &p)
			fmt.Println(resp.StatusCode, p.Title, p.Code)
			return
		}
		fmt.Println(resp.StatusCode, resp.Body, "replayed:", resp.Headers["Idempotency-Replayed"] == "true")
	}
	send(`"8e03978e-40d5-43e8-bc93-6894a57f9324"`, `{"amount":5}`)
	send(`"8e03978e-40d5-43e8-bc93-6894a57f9324"`, `{"amount":5}`)   // a retry
	send(`"8e03978e-40d5-43e8-bc93-6894a57f9324"`, `{"amount":500}`) // the key reused
	send(``, `{"amount":5}`)
	send(`"k1", "k2"`, `{"amount":5}`) // the header sent twice
	fmt.Println("charges:", charges)
	// Output:
	// 201 {"charge":"ch_1"} replayed: false
	// 201 {"charge":"ch_1"} replayed: true
	// 422 Unprocessable Content key-reused
	// 400 Bad Request missing-key
	// 400 Bad Request invalid-key
	// charges: 1
}

// Problem types of your API's own: each problem's type is the page of your
// documentation that describes it, and its title says what happened.
func ExampleWithProblemTypeBase() {
	h := httpapi.Wrap(idempotencytest.NewStore(),
		func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusCreated}, nil
		},
		httpapi.WithKeyHeader(true),
		httpapi.WithProblemTypeBase("https://api.example.com/problems/"),
		httpapi.WithOptions(idempotency.WithKeyPrefix("payments")),
	)
	resp, _ := h(context.Background(), events.APIGatewayV2HTTPRequest{Body: `{"amount":5}`})
	fmt.Println(resp.StatusCode, resp.Body)
	// Output:
	// 400 {"type":"https://api.example.com/problems/missing-key","title":"Idempotency key missing","status":400,"detail":"This operation requires an Idempotency-Key header, such as Idempotency-Key: \"8e03978e-40d5-43e8-bc93-6894a57f9324\".","code":"missing-key"}
}

// The handler's own errors come back unchanged, after the key has been
// released: answer them with statuses of your own around what Wrap
// returns.
func ExampleWrap_ownErrors() {
	errDeclined := errors.New("card declined")
	charge := func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{}, errDeclined
	}
	pay := httpapi.Wrap(idempotencytest.NewStore(), charge,
		httpapi.WithKeyHeader(true),
		httpapi.WithOptions(idempotency.WithKeyPrefix("payments")),
	)
	handler := func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		resp, err := pay(ctx, req)
		if errors.Is(err, errDeclined) {
			return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusPaymentRequired}, nil
		}
		return resp, err // lambda.Start(handler) reports any other error
	}

	req := events.APIGatewayV2HTTPRequest{Headers: map[string]string{"idempotency-key": "k1"}, Body: `{"amount":5}`}
	for range 2 {
		resp, err := handler(context.Background(), req)
		fmt.Println(resp.StatusCode, err)
	}
	// Output:
	// 402 <nil>
	// 402 <nil>
}

// Keys scoped to the caller that an HTTP API JWT authorizer identified:
// the same Idempotency-Key from two users is two requests.
func ExampleWithClient() {
	runs := 0
	h := httpapi.Wrap(idempotencytest.NewStore(),
		func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			runs++
			return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusCreated}, nil
		},
		httpapi.WithKeyHeader(true),
		httpapi.WithClient(func(req events.APIGatewayV2HTTPRequest) string {
			if a := req.RequestContext.Authorizer; a != nil && a.JWT != nil {
				return a.JWT.Claims["sub"]
			}
			return ""
		}),
		httpapi.WithOptions(idempotency.WithKeyPrefix("payments")),
	)
	for _, user := range []string{"alice", "bob", "alice"} {
		req := events.APIGatewayV2HTTPRequest{
			Headers: map[string]string{"idempotency-key": "k1"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
				JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"sub": user}},
			}},
		}
		resp, _ := h(context.Background(), req)
		fmt.Println(user, resp.StatusCode, "replayed:", resp.Headers["Idempotency-Replayed"] == "true")
	}
	fmt.Println("runs:", runs)
	// Output:
	// alice 201 replayed: false
	// bob 201 replayed: false
	// alice 201 replayed: true
	// runs: 2
}
