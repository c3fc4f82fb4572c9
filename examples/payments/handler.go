package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/httpapi"
)

// Key paths into the API Gateway event: the order id is the idempotency
// key, and a retry must carry the same amount and currency.
const (
	eventKeyPath   = "powertools_json(body).order_id"
	validationPath = "powertools_json(body).[amount,currency]"
)

// App is the payments function: POST /payments charges a card once per
// order_id.
//
// Handle checks the request, then runs the idempotent part (chargeOnce)
// through the HTTP adapter, which answers the middleware's outcomes: the
// stored response for a retry, 409 while the first request runs, 422 for
// an order_id reused with another amount, and so on (docs/http.md). The
// check comes first so that a bad request is a 400 that leaves no
// idempotency record: fixing the body and sending it again must not meet
// a stored failure.
type App struct {
	pay      func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	provider *ProviderClient
	log      *slog.Logger
	// beforeCharge, when set, runs just before the provider is called: the
	// tests make it panic.
	beforeCharge func(Payment)
}

// NewApp returns the function, its idempotent part built on store with
// opts. It fails on an invalid option or environment variable, which makes
// the function fail at cold start rather than on a payment.
func NewApp(store idempotency.Store, provider *ProviderClient, log *slog.Logger, opts ...idempotency.Option) (*App, error) {
	a := &App{provider: provider, log: log}
	pay, err := httpapi.New(store, a.chargeOnce, httpapi.WithOptions(opts...))
	if err != nil {
		return nil, err
	}
	a.pay = pay
	return a, nil
}

// Handle answers one POST /payments request.
func (a *App) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	body := []byte(req.Body)
	if req.IsBase64Encoded {
		decoded, err := base64.StdEncoding.DecodeString(req.Body)
		if err != nil {
			return problem(http.StatusBadRequest, "the body is not valid base64"), nil
		}
		body = decoded
	}
	if _, err := parsePayment(body); err != nil {
		return problem(http.StatusBadRequest, err.Error()), nil
	}
	// The key paths read the body as JSON text, so it goes on decoded.
	req.Body, req.IsBase64Encoded = string(body), false

	resp, err := a.pay(ctx, req)
	if _, ok := errors.AsType[*ProviderError](err); ok {
		// The adapter returns the handler's own errors as they are, once
		// the key is released: a retry charges again, with the same
		// Idempotency-Key at the provider.
		a.log.ErrorContext(ctx, "charge failed", "err", err)
		return problem(http.StatusBadGateway, "the payment provider failed; retry with the same order_id"), nil
	}
	return resp, err
}

// problem is an RFC 9457 problem details response of the function's own,
// in the format of the adapter's.
func problem(status int, detail string) events.APIGatewayV2HTTPResponse {
	body, err := json.Marshal(struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}{"about:blank", http.StatusText(status), status, detail})
	if err != nil {
		panic(err) // three strings and an int
	}
	return events.APIGatewayV2HTTPResponse{
		StatusCode: status,
		Headers:    map[string]string{"Content-Type": "application/problem+json"},
		Body:       string(body),
	}
}
