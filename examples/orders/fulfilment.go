package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Fulfilment is the fulfilment service's reply to POST /fulfilments.
type Fulfilment struct {
	ID string `json:"id"`
}

// StatusError is a non-2xx reply of the fulfilment service. 429 (too many
// requests at once) is one: the record fails and comes back after the
// queue's visibility timeout, which is the back-off.
type StatusError struct {
	StatusCode int
	Body       string // the start of the reply, for the log
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("orders: fulfilment service answered %d: %s", e.StatusCode, e.Body)
}

// FulfilmentClient calls the fulfilment service.
type FulfilmentClient struct {
	BaseURL string
	Timeout time.Duration // per request
	HTTP    *http.Client
}

// Fulfil asks the service to fulfil o. The request carries the record's
// idempotency key as its Idempotency-Key, so that the service can
// deduplicate too, should the function lose its lease halfway through.
func (c *FulfilmentClient) Fulfil(ctx context.Context, o Order) (Fulfilment, error) {
	key, ok := idempotency.KeyFromContext(ctx)
	if !ok {
		// Idempotency disabled (POWERTOOLS_IDEMPOTENCY_DISABLED): the order
		// id is still a stable key for the service.
		key = "order#" + o.OrderID
	}
	body, err := json.Marshal(o)
	if err != nil {
		return Fulfilment{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+"/fulfilments", bytes.NewReader(body))
	if err != nil {
		return Fulfilment{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Fulfilment{}, fmt.Errorf("orders: fulfilment request: %w", err)
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return Fulfilment{}, fmt.Errorf("orders: read the fulfilment reply: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Fulfilment{}, &StatusError{StatusCode: resp.StatusCode, Body: string(reply[:min(len(reply), 200)])}
	}
	var f Fulfilment
	if err := json.Unmarshal(reply, &f); err != nil || f.ID == "" {
		return Fulfilment{}, fmt.Errorf("orders: fulfilment reply %q has no id", reply[:min(len(reply), 200)])
	}
	return f, nil
}
