package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// Payment is the body of POST /payments.
type Payment struct {
	OrderID  string `json:"order_id"`
	Customer string `json:"customer"`
	Amount   int64  `json:"amount"` // in the currency's minor unit (cents)
	Currency string `json:"currency"`
	// Items are the order's lines, optional. When given, they must add up
	// to Amount; the receipt lists them, so a large order makes a large
	// response (docs/large-and-sensitive-responses.md). The provider is
	// sent the amount only.
	Items []Item `json:"items,omitempty"`
}

// Item is a line of an order.
type Item struct {
	SKU        string `json:"sku"`
	Name       string `json:"name,omitempty"`
	Quantity   int64  `json:"quantity"`
	UnitAmount int64  `json:"unit_amount"` // in the currency's minor unit
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
	if p.Items != nil {
		if err := checkItems(p.Items, p.Amount); err != nil {
			return Payment{}, err
		}
	}
	return p, nil
}

// checkItems checks each line, and that the lines add up to amount.
func checkItems(items []Item, amount int64) error {
	var total int64
	for i, it := range items {
		switch {
		case it.SKU == "":
			return &InvalidPaymentError{Reason: fmt.Sprintf("items[%d]: sku is missing or empty", i)}
		case it.Quantity <= 0:
			return &InvalidPaymentError{Reason: fmt.Sprintf("items[%d]: quantity must be a positive integer, not %d", i, it.Quantity)}
		case it.UnitAmount < 0:
			return &InvalidPaymentError{Reason: fmt.Sprintf("items[%d]: unit_amount must not be negative, not %d", i, it.UnitAmount)}
		}
		hi, line := bits.Mul64(uint64(it.Quantity), uint64(it.UnitAmount))
		if hi != 0 || line > uint64(math.MaxInt64-total) {
			return &InvalidPaymentError{Reason: "the items add up to more than any amount"}
		}
		total += int64(line)
	}
	if total != amount {
		return &InvalidPaymentError{Reason: fmt.Sprintf("the items add up to %d, not the amount %d", total, amount)}
	}
	return nil
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
