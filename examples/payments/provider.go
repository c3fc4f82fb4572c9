package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ProviderClient charges cards through the payment provider's HTTP API:
// POST {BaseURL}/charges with an Idempotency-Key header.
type ProviderClient struct {
	BaseURL string
	// Timeout bounds one charge request. A charge that times out is a
	// [ProviderError]: the handler answers 502 and releases the idempotency
	// record, and the client's retry re-sends the same Idempotency-Key, so
	// the provider does not charge twice if the first request went through.
	Timeout time.Duration
	HTTP    *http.Client
}

// ProviderError is a charge that failed or whose outcome is unknown
// (timeout, 5xx, unreadable reply). It becomes a 502 response.
type ProviderError struct {
	StatusCode int // 0 when no reply came
	Err        error
}

func (e *ProviderError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("payment provider: status %d: %v", e.StatusCode, e.Err)
	}
	return fmt.Sprintf("payment provider: %v", e.Err)
}

func (e *ProviderError) Unwrap() error { return e.Err }

// Charge asks the provider to charge p under key and returns the
// provider's charge id.
//
// The request is not bound to the invocation's deadline, only to Timeout:
// the idempotency lease ends at that deadline, so if Lambda stops the
// function mid-charge, the record is free for the client's retry at once,
// and the retry's Idempotency-Key makes the provider return the charge it
// may have made. Cutting the request at the deadline would only race
// Lambda's own timeout.
func (c *ProviderClient) Charge(ctx context.Context, key string, p Payment) (string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.Timeout)
	defer cancel()
	// The provider charges an amount: the order's lines stay here.
	body, err := json.Marshal(Payment{OrderID: p.OrderID, Customer: p.Customer, Amount: p.Amount, Currency: p.Currency})
	if err != nil {
		return "", &ProviderError{Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+"/charges", bytes.NewReader(body))
	if err != nil {
		return "", &ProviderError{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return "", &ProviderError{Err: err}
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", &ProviderError{StatusCode: resp.StatusCode, Err: err}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", &ProviderError{StatusCode: resp.StatusCode, Err: fmt.Errorf("reply %q", bytes.TrimSpace(reply))}
	}
	var charge struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(reply, &charge); err != nil || charge.ID == "" {
		return "", &ProviderError{StatusCode: resp.StatusCode, Err: fmt.Errorf("reply without a charge id: %q", reply)}
	}
	return charge.ID, nil
}
