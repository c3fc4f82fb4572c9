package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestProviderClientErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		reply  func(w http.ResponseWriter, r *http.Request)
		status int // the ProviderError's StatusCode
	}{
		"server error":       {func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }, 500},
		"declined":           {func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusPaymentRequired) }, 402},
		"reply without id":   {func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{}`)) }, 200},
		"reply that is junk": {func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`<html>`)) }, 200},
		// No reply until the client, its timeout passed, hangs up (which
		// the server notices once it has read the request's body).
		"too slow": {func(_ http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body); <-r.Context().Done() }, 0},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(tt.reply))
			defer srv.Close()
			c := &ProviderClient{BaseURL: srv.URL, Timeout: 50 * time.Millisecond, HTTP: srv.Client()}
			id, err := c.Charge(context.Background(), "key", Payment{OrderID: "o-1", Customer: "c", Amount: 1, Currency: "EUR"})
			var pe *ProviderError
			if !errors.As(err, &pe) || pe.StatusCode != tt.status {
				t.Fatalf("Charge = %q, %v; want a ProviderError with status %d", id, err, tt.status)
			}
		})
	}
}

// The charge is bounded by the client's timeout, not by the invocation's
// deadline (see Charge): a context that ends first does not cut it.
func TestProviderClientOutlivesTheContextDeadline(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-ctx.Done() // the reply comes after the invocation's deadline
		w.Write([]byte(`{"id":"ch_1"}`))
	}))
	defer srv.Close()
	c := &ProviderClient{BaseURL: srv.URL, Timeout: 5 * time.Second, HTTP: srv.Client()}
	id, err := c.Charge(ctx, "key", Payment{OrderID: "o-1", Customer: "c", Amount: 1, Currency: "EUR"})
	if err != nil || id != "ch_1" {
		t.Errorf("Charge = %q, %v; want ch_1", id, err)
	}
}

// The provider gets the charge, not the order's lines: an order of
// megabytes is a charge request of a hundred bytes.
func TestProviderClientSendsTheChargeOnly(t *testing.T) {
	t.Parallel()
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
		w.Write([]byte(`{"id":"ch_1"}`))
	}))
	defer srv.Close()
	c := &ProviderClient{BaseURL: srv.URL, Timeout: 5 * time.Second, HTTP: srv.Client()}
	p := Payment{OrderID: "o-1", Customer: "c", Amount: 900, Currency: "EUR", Items: []Item{{SKU: "A", Quantity: 2, UnitAmount: 450}}}
	if _, err := c.Charge(context.Background(), "key", p); err != nil {
		t.Fatal(err)
	}
	if want := `{"order_id":"o-1","customer":"c","amount":900,"currency":"EUR"}`; got != want {
		t.Errorf("the provider got %s, want %s", got, want)
	}
}
