package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/idempotency"
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
// Handle checks the request, runs the idempotent part (chargeOnce, wrapped
// by the idempotency middleware) and turns the middleware's errors into
// HTTP answers. The check comes first so that a bad request is a 400 that
// leaves no idempotency record: fixing the body and sending it again must
// not meet a stored failure.
type App struct {
	charge   *idempotency.Typed[events.APIGatewayV2HTTPRequest, events.APIGatewayV2HTTPResponse]
	provider *ProviderClient
	log      *slog.Logger
	now      func() time.Time
	// beforeCharge, when set, runs just before the provider is called: the
	// tests make it panic.
	beforeCharge func(Payment)
}

// NewApp returns the function, its idempotent part built on store with
// opts. It fails on an invalid option or environment variable, which makes
// the function fail at cold start rather than on a payment.
func NewApp(store idempotency.Store, provider *ProviderClient, log *slog.Logger, opts ...idempotency.Option) (*App, error) {
	a := &App{provider: provider, log: log, now: time.Now}
	opts = append([]idempotency.Option{idempotency.WithReplayHook(markReplayed)}, opts...)
	charge, err := idempotency.NewTyped(store, a.chargeOnce, opts...)
	if err != nil {
		return nil, err
	}
	a.charge = charge
	return a, nil
}

// Handle answers one POST /payments request.
func (a *App) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	body := []byte(req.Body)
	if req.IsBase64Encoded {
		decoded, err := base64.StdEncoding.DecodeString(req.Body)
		if err != nil {
			return errorResponse(http.StatusBadRequest, "the body is not valid base64"), nil
		}
		body = decoded
	}
	if _, err := parsePayment(body); err != nil {
		return errorResponse(http.StatusBadRequest, err.Error()), nil
	}
	// The key paths read the body as JSON text, so it goes on decoded.
	req.Body, req.IsBase64Encoded = string(body), false
	event, err := json.Marshal(req)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}

	resp, _, err := a.charge.Call(ctx, event)
	if err == nil {
		return resp, nil
	}
	if inProgress, ok := errors.AsType[*idempotency.InProgressError](err); ok {
		resp := errorResponse(http.StatusConflict, "a payment for this order_id is being processed; retry later")
		resp.Headers["Retry-After"] = strconv.Itoa(retryAfter(inProgress.LeaseEnd, a.now()))
		return resp, nil
	}
	if _, ok := errors.AsType[*idempotency.InvalidEventError](err); ok {
		// Names that the decoding above reads as one field but a key
		// search could read as two ("order_id" and "ORDER_ID"): the
		// request means two things, and is refused before any record.
		return errorResponse(http.StatusBadRequest, "the body names a field twice, perhaps in another letter case"), nil
	}
	if _, ok := errors.AsType[*idempotency.PayloadConflictError](err); ok {
		return errorResponse(http.StatusUnprocessableEntity, "this order_id was already paid with another amount or currency"), nil
	}
	if _, ok := errors.AsType[*ProviderError](err); ok {
		a.log.ErrorContext(ctx, "charge failed", "err", err)
		return errorResponse(http.StatusBadGateway, "the payment provider failed; retry with the same order_id"), nil
	}
	// Store failures and the like: Lambda reports the error, and API
	// Gateway answers 500.
	return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("payments: %w", err)
}

// replayedHeader marks a response that is the replay of a stored one, so
// that a client (or a person reading its logs) can tell a retry that was
// answered from one that charged.
const replayedHeader = "Idempotency-Replayed"

// markReplayed is the replay hook: the stored response, with the header
// that says it is a replay. The stored one is left as it was.
func markReplayed(_ context.Context, resp events.APIGatewayV2HTTPResponse, _ *idempotency.Record) (events.APIGatewayV2HTTPResponse, error) {
	headers := make(map[string]string, len(resp.Headers)+1)
	for k, v := range resp.Headers {
		headers[k] = v
	}
	headers[replayedHeader] = "true"
	resp.Headers = headers
	return resp, nil
}

// retryAfter is the Retry-After value, in whole seconds, for a key leased
// until leaseEnd: the lease's remaining time rounded up, at least 1.
func retryAfter(leaseEnd, now time.Time) int {
	wait := leaseEnd.Sub(now)
	secs := int((wait + time.Second - 1) / time.Second)
	return max(secs, 1)
}

func errorResponse(status int, message string) events.APIGatewayV2HTTPResponse {
	return jsonResponse(status, map[string]string{"error": message})
}
