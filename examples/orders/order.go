package main

import (
	"encoding/json"
	"fmt"
)

// Order is the body of a message on the orders queue.
type Order struct {
	OrderID  string `json:"order_id"`
	Customer string `json:"customer"`
	Amount   int64  `json:"amount"` // in the currency's minor unit
	Currency string `json:"currency"`
}

// MalformedOrderError is a message body that is not an order. Retrying it
// cannot help: after maxReceiveCount deliveries it ends in the dead-letter
// queue, where someone can look at it.
type MalformedOrderError struct {
	Reason string
}

func (e *MalformedOrderError) Error() string { return "orders: malformed order: " + e.Reason }

// parseOrder decodes and checks a message body.
func parseOrder(body string) (Order, error) {
	var o Order
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		return Order{}, &MalformedOrderError{Reason: err.Error()}
	}
	switch {
	case o.OrderID == "":
		return Order{}, &MalformedOrderError{Reason: "no order_id"}
	case o.Customer == "":
		return Order{}, &MalformedOrderError{Reason: fmt.Sprintf("order %s has no customer", o.OrderID)}
	case o.Amount <= 0:
		return Order{}, &MalformedOrderError{Reason: fmt.Sprintf("order %s has amount %d", o.OrderID, o.Amount)}
	case len(o.Currency) != 3:
		return Order{}, &MalformedOrderError{Reason: fmt.Sprintf("order %s has currency %q", o.OrderID, o.Currency)}
	}
	return o, nil
}
