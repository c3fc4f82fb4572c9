package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Payment is the body of POST /payments.
type Payment struct {
	OrderID  string `json:"order_id"`
	Customer string `json:"customer"`
	Amount   int64  `json:"amount"` // in the currency's minor unit (cents)
	Currency string `json:"currency"`
}

// InvalidPaymentError says why a request body is not a payment. It becomes
// a 400 response.
type InvalidPaymentError struct {
	Reason string
}

func (e *InvalidPaymentError) Error() string { return "invalid payment: " + e.Reason }

// parsePayment decodes and checks a request body. Unknown fields are
// refused, so that a misspelled "ammount" is a 400 and not a charge of zero.
func parsePayment(body []byte) (Payment, error) {
	var p Payment
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Payment{}, &InvalidPaymentError{Reason: "the body is not a payment object: " + err.Error()}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Payment{}, &InvalidPaymentError{Reason: "the body holds more than one JSON value"}
	}
	switch {
	case p.OrderID == "":
		return Payment{}, &InvalidPaymentError{Reason: "order_id is missing or empty"}
	case p.Customer == "":
		return Payment{}, &InvalidPaymentError{Reason: "customer is missing or empty"}
	case p.Amount <= 0:
		return Payment{}, &InvalidPaymentError{Reason: fmt.Sprintf("amount must be a positive integer in minor units, not %d", p.Amount)}
	case !isCurrencyCode(p.Currency):
		return Payment{}, &InvalidPaymentError{Reason: fmt.Sprintf("currency must be an ISO 4217 code such as \"EUR\", not %q", p.Currency)}
	}
	return p, nil
}

func isCurrencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := range len(s) {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}
