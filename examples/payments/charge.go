package main

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Receipt is the body of a 201 response.
type Receipt struct {
	PaymentID string `json:"payment_id"` // the provider's charge id
	OrderID   string `json:"order_id"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	Status    string `json:"status"`
	Items     []Item `json:"items,omitempty"` // the order's lines, as the request gave them
}

// chargeOnce is the idempotent part of the function: the idempotency
// middleware runs it at most once per order_id, stores its response and
// replays that response to duplicates. Handle has checked the body already;
// a request that reaches here is a payment.
//
// An error leaves no record behind, so the client's retry charges again;
// the provider sees the same Idempotency-Key both times and does not charge
// twice.
func (a *App) chargeOnce(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	p, err := parsePayment([]byte(req.Body))
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	key, ok := idempotency.KeyFromContext(ctx)
	if !ok {
		// Idempotency is off (POWERTOOLS_IDEMPOTENCY_DISABLED): the order
		// id still lets the provider deduplicate.
		key = "order-" + p.OrderID
	}
	deadline, _ := ctx.Deadline()
	// The deadline is logged because the lease of the record ends at it:
	// the end-to-end tests compare the two.
	a.log.InfoContext(ctx, "charging", "order_id", p.OrderID, "amount", p.Amount, "currency", p.Currency,
		"idempotency_key", key, "deadline_ms", deadline.UnixMilli())
	if a.beforeCharge != nil {
		a.beforeCharge(p)
	}
	id, err := a.provider.Charge(ctx, key, p)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return jsonResponse(http.StatusCreated, Receipt{
		PaymentID: id,
		OrderID:   p.OrderID,
		Amount:    p.Amount,
		Currency:  p.Currency,
		Status:    "charged",
		Items:     p.Items,
	}), nil
}

// jsonResponse is an HTTP API proxy response with v as its JSON body.
func jsonResponse(status int, v any) events.APIGatewayV2HTTPResponse {
	body, err := json.Marshal(v)
	if err != nil {
		// v is one of this package's plain structs or maps of strings.
		panic(err)
	}
	return events.APIGatewayV2HTTPResponse{
		StatusCode: status,
		Headers:    map[string]string{"Content-Type": "application/json"},
		Body:       string(body),
	}
}
