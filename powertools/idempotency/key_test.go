package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/fake"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// echo is a handler that returns its event and counts its calls.
type echo struct{ calls int }

func (e *echo) handle(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
	e.calls++
	return in, nil
}

func TestMissingKeyRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		value   string // the "k" field of the event; "" leaves it out
		missing bool
	}{
		{"absent", "", true},
		{"null", `null`, true},
		{"empty string", `""`, true},
		{"empty array", `[]`, true},
		{"empty object", `{}`, true},
		{"array of only nulls", `[null,null]`, true},
		{"zero", `0`, false},
		{"false", `false`, false},
		{"array with a null", `[null,1]`, true},
		{"array without nulls", `[0,1]`, false},
		{"object", `{"a":1}`, false},
		// A selected object may hold nulls of its own.
		{"object with a null", `{"c":"C-1","o":null}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			event := `{"other":1}`
			if tc.value != "" {
				event = `{"k":` + tc.value + `}`
			}
			var e echo
			h := idempotency.Wrap(idempotencytest.NewStore(), e.handle,
				idempotency.WithKeyPrefix("p"), idempotency.WithEventKey("k"), idempotency.WithKeyRequired(true))
			_, err := h.Invoke(context.Background(), []byte(event))
			if tc.missing {
				var mk *idempotency.MissingKeyError
				if !errors.As(err, &mk) || mk.Expression != "k" {
					t.Fatalf("err = %v, want *MissingKeyError for k", err)
				}
				if e.calls != 0 {
					t.Fatal("handler ran without its required key")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Invoke(context.Background(), []byte(event)); err != nil {
				t.Fatal(err)
			}
			if e.calls != 1 {
				t.Fatalf("handler ran %d times for one key, want 1", e.calls)
			}
		})
	}
}

func TestMissingKeyNotRequiredWarns(t *testing.T) {
	t.Parallel()
	logs := &fake.Log{}
	var e echo
	store := idempotencytest.NewStore()
	h := idempotency.Wrap(store, e.handle, idempotency.WithKeyPrefix("p"), idempotency.WithEventKey("k"),
		idempotency.WithLogger(slog.New(logs)))
	for range 2 {
		if _, err := h.Invoke(context.Background(), []byte(`{"k":""}`)); err != nil {
			t.Fatal(err)
		}
	}
	if e.calls != 2 {
		t.Errorf("handler ran %d times, want 2: without a key there is no idempotency", e.calls)
	}
	if got := len(logs.At(slog.LevelWarn)); got != 2 {
		t.Errorf("%d warnings, want one per invocation", got)
	}
	if c := store.Counts(); c != (idempotencytest.Counts{}) {
		t.Errorf("store calls %+v, want none", c)
	}
}

func TestKeyIndependentOfFieldOrderAndWhitespace(t *testing.T) {
	t.Parallel()
	events := []string{
		`{"a":1,"b":{"x":[1,2],"y":"z"}}`,
		`{"b":{"y":"z","x":[1,2]},"a":1}`,
		"{ \"b\" : { \"y\" : \"z\" , \"x\" : [ 1 , 2 ] } ,\n \"a\" : 1 }",
	}
	var e echo
	store := idempotencytest.NewStore()
	h := idempotency.Wrap(store, e.handle, idempotency.WithKeyPrefix("p")) // the whole event is the key
	for _, ev := range events {
		got, err := h.Invoke(context.Background(), []byte(ev))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != events[0] {
			t.Errorf("response %s, want the first event's %s", got, events[0])
		}
	}
	if e.calls != 1 {
		t.Errorf("handler ran %d times, want 1", e.calls)
	}
	if n := len(store.Records()); n != 1 {
		t.Errorf("%d records, want 1", n)
	}
}

func TestKeyFormat(t *testing.T) {
	t.Parallel()
	store := idempotencytest.NewStore()
	h := idempotency.Wrap(store, (&echo{}).handle, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"))
	if _, err := h.Invoke(context.Background(), []byte(`{"order_id":"o-1"}`)); err != nil {
		t.Fatal(err)
	}
	recs := store.Records()
	if len(recs) != 1 || recs[0].Key != keyOf("o-1") {
		t.Fatalf("records %+v, want one with key %s", recs, keyOf("o-1"))
	}
}

func TestNumbersKeptAsWritten(t *testing.T) {
	t.Parallel()
	var e echo
	h := idempotency.Wrap(idempotencytest.NewStore(), e.handle, idempotency.WithKeyPrefix("p"), idempotency.WithEventKey("n"))
	for _, ev := range []string{`{"n":1}`, `{"n":1.0}`, `{"n":1}`} {
		if _, err := h.Invoke(context.Background(), []byte(ev)); err != nil {
			t.Fatal(err)
		}
	}
	if e.calls != 2 {
		t.Errorf("handler ran %d times, want 2: 1 and 1.0 are different keys", e.calls)
	}
}

// TestMultiSelectKeyWithAbsentPath checks that a multi-select key with one
// path absent is no key: keyed on the customer alone, a customer's second
// order would get the first one's response.
func TestMultiSelectKeyWithAbsentPath(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		expr     string
		required bool
	}{
		{"[customer_id, order_id]", false},
		{"[customer_id, order_id]", true},
		{"{c: customer_id, o: order_id}", false},
		{"{c: customer_id, o: order_id}", true},
		{"@ | {c: customer_id, o: order_id}", true},
	} {
		required := tt.required
		t.Run(fmt.Sprintf("%s,required=%v", tt.expr, required), func(t *testing.T) {
			var e echo
			h := idempotency.Wrap(idempotencytest.NewStore(), e.handle, idempotency.WithKeyPrefix("p"),
				idempotency.WithEventKey(tt.expr), idempotency.WithKeyRequired(required))
			if _, err := h.Invoke(context.Background(), []byte(`{"customer_id":"c1","order_id":"o1"}`)); err != nil {
				t.Fatal(err)
			}
			_, err := h.Invoke(context.Background(), []byte(`{"customer_id":"c1","orderId":"o2"}`))
			switch {
			case required && !errors.As(err, new(*idempotency.MissingKeyError)):
				t.Fatalf("err = %v, want a MissingKeyError", err)
			case !required && err != nil:
				t.Fatal(err)
			case !required && e.calls != 2:
				t.Fatalf("handler ran %d times, want 2: the second order is no replay of the first", e.calls)
			}
		})
	}
}
