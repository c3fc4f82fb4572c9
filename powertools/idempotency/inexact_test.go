package idempotency_test

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

var modes = []idempotency.Compatibility{idempotency.PowertoolsPython, idempotency.PowertoolsTypeScript}

// untouchedStore fails the test on any call: an event refused as inexact
// is refused before the store is asked anything.
type untouchedStore struct{ t *testing.T }

func (s untouchedStore) Acquire(context.Context, *idempotency.Record, time.Time) (*idempotency.Record, error) {
	s.t.Error("Acquire called")
	return nil, errors.New("untouched")
}

func (s untouchedStore) Complete(context.Context, *idempotency.Record) error {
	s.t.Error("Complete called")
	return errors.New("untouched")
}

func (s untouchedStore) MarkUncertain(context.Context, *idempotency.Record) error {
	s.t.Error("MarkUncertain called")
	return errors.New("untouched")
}

func (s untouchedStore) Reclaim(context.Context, *idempotency.Record, string) error {
	s.t.Error("Reclaim called")
	return errors.New("untouched")
}

func (s untouchedStore) Release(context.Context, string, string) error {
	s.t.Error("Release called")
	return errors.New("untouched")
}

func (s untouchedStore) Get(context.Context, string) (*idempotency.Record, error) {
	s.t.Error("Get called")
	return nil, errors.New("untouched")
}

// In a compatibility mode, a number that Powertools would hash like
// another number is refused, in the key and in the validated payload, at
// any depth, with the expression, the mode, the path and the number.
func TestInexactNumbersRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		modes      []idempotency.Compatibility
		key        string // the key expression
		validation string // the payload validation expression
		event      string
		expr       string // of the *InvalidEventError
		path       string
		number     string
	}{
		{"amount past a double's digits", modes, "amount", "", `{"amount":100.00000000000000001}`, "amount", "@", "100.00000000000000001"},
		{"the exact value of the double nearest 0.1", modes, "amount", "", `{"amount":0.1000000000000000055511151231257827}`, "amount", "@", "0.1000000000000000055511151231257827"},
		{"beyond a double's range", modes, "amount", "", `{"amount":1e400}`, "amount", "@", "1e400"},
		{"beyond a double's range, negative", modes, "amount", "", `{"amount":-2e400}`, "amount", "@", "-2e400"},
		{"below the smallest subnormal", modes, "amount", "", `{"amount":1e-400}`, "amount", "@", "1e-400"},
		{"an integer past 2^53", modes[1:], "order_id", "", `{"order_id":9007199254740993}`, "order_id", "@", "9007199254740993"},
		{"validated amount", modes, "order_id", "[amount, currency]", `{"order_id":"o-1","amount":100.00000000000000001,"currency":"EUR"}`, "[amount, currency]", "[0]", "100.00000000000000001"},
		{"validated whole event", modes, "order_id", "@", `{"order_id":"o-1","amount":2e400}`, "@", "amount", "2e400"},
		{"validated integer past 2^53", modes[1:], "order_id", "detail", `{"order_id":"o-1","detail":{"account":9007199254740993}}`, "detail", "account", "9007199254740993"},
		{"nested in arrays and objects", modes, "order", "", `{"order":{"items":[{"price":1},{"price":2.5},{"price":0.1000000000000000055511151231257827}]}}`, "order", "items[2].price", "0.1000000000000000055511151231257827"},
		{"arrays in arrays", modes, "grid", "", `{"grid":[[1,2],[3,1e400]]}`, "grid", "[1][1]", "1e400"},
		{"a name that needs quoting", modes, "", "", `{"id":"o-1","line items":{"unit price":100.00000000000000001}}`, "@", `"line items"."unit price"`, "100.00000000000000001"},
		{"in a JSON body", modes, "powertools_json(body).amount", "", `{"body":"{\"amount\":100.00000000000000001}"}`, "powertools_json(body).amount", "@", "100.00000000000000001"},
	}
	for _, tc := range tests {
		for _, mode := range tc.modes {
			t.Run(tc.name+"/"+mode.String(), func(t *testing.T) {
				h, err := idempotency.New(untouchedStore{t}, nop, idempotency.WithCompatibility(mode), idempotency.WithKeyPrefix("p"),
					idempotency.WithEventKey(tc.key), idempotency.WithPayloadValidation(tc.validation), idempotency.WithKeyRequired(true))
				if err != nil {
					t.Fatal(err)
				}
				_, _, keyErr := h.KeyOf([]byte(tc.event))
				_, err = h.Invoke(context.Background(), []byte(tc.event))
				for _, err := range []error{keyErr, err} {
					invalid, ok := errors.AsType[*idempotency.InvalidEventError](err)
					if !ok || invalid.Expression != tc.expr {
						t.Fatalf("error %v, want an *InvalidEventError for %q", err, tc.expr)
					}
					inexact, ok := errors.AsType[*idempotency.InexactNumberError](err)
					if !ok {
						t.Fatalf("error %v, want an *InexactNumberError", err)
					}
					want := idempotency.InexactNumberError{Compatibility: mode, Path: tc.path, Number: tc.number}
					if *inexact != want {
						t.Errorf("%+v, want %+v", *inexact, want)
					}
				}
			})
		}
	}
}

// Numbers that Powertools reads exactly are keyed, with the keys and the
// payload hashes they had before numbers were checked: the MD5 of the
// text each runtime writes for them.
func TestExactNumbersKeyed(t *testing.T) {
	t.Parallel()
	md5hex := func(s string) string { sum := md5.Sum([]byte(s)); return hex.EncodeToString(sum[:]) }
	md5b64 := func(s string) string { sum := md5.Sum([]byte(s)); return base64.StdEncoding.EncodeToString(sum[:]) }
	tests := []struct {
		number     string
		python, ts string // json.dumps's and JSON.stringify's text of it; "" if refused
	}{
		{"100", "100", "100"},
		{"100.5", "100.5", "100.5"},
		{"100.0", "100.0", "100"},
		{"0.1", "0.1", "0.1"},
		{"1e21", "1e+21", "1e+21"},
		{"-0", "0", "0"},
		{"-0.0", "-0.0", "0"},
		{"1.5e-7", "1.5e-07", "1.5e-7"},
		{"9007199254740991", "9007199254740991", "9007199254740991"},
		{"-9007199254740992", "-9007199254740992", "-9007199254740992"},
		{"123456789012.345", "123456789012.345", "123456789012.345"},
		{"5e-324", "5e-324", "5e-324"},
		{"1.7976931348623157e308", "1.7976931348623157e+308", "1.7976931348623157e+308"},
		// Python's ints are exact: it keys an integer past 2^53 as written.
		{"9007199254740993", "9007199254740993", ""},
		{"123456789012345678901234567890", "123456789012345678901234567890", ""},
	}
	for _, tc := range tests {
		for _, mode := range modes {
			t.Run(tc.number+"/"+mode.String(), func(t *testing.T) {
				h, err := idempotency.New(idempotencytest.NewStore(), nop, idempotency.WithCompatibility(mode), idempotency.WithKeyPrefix("p"),
					idempotency.WithEventKey("amount"), idempotency.WithPayloadValidation("[amount]"))
				if err != nil {
					t.Fatal(err)
				}
				key, hash, err := h.KeyOf([]byte(`{"amount":` + tc.number + `}`))
				text, digest := tc.python, md5hex
				if mode == idempotency.PowertoolsTypeScript {
					text, digest = tc.ts, md5b64
				}
				switch {
				case text == "":
					if !errors.As(err, new(*idempotency.InexactNumberError)) {
						t.Errorf("error %v, want an *InexactNumberError", err)
					}
				case err != nil:
					t.Errorf("KeyOf: %v", err)
				case key != "p#"+digest(text) || hash != digest("["+text+"]"):
					t.Errorf("key %s, hash %s; want the MD5 of %s and of [%s]", key, hash, text, text)
				}
			})
		}
	}
	// What json.Marshal writes for a float64, as a Go client sends it
	// (internal/testing/interop compares their keys with the runtimes').
	for _, f := range []float64{0.1 + 0.2, 1e21, 1e-7, 1.0 / 3, 2.5e-310, -math.MaxFloat64, math.SmallestNonzeroFloat64} {
		event, err := json.Marshal(map[string]float64{"amount": f})
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range modes {
			h := idempotency.Wrap(idempotencytest.NewStore(), nop, idempotency.WithCompatibility(mode), idempotency.WithKeyPrefix("p"),
				idempotency.WithEventKey("amount"), idempotency.WithPayloadValidation("@"))
			if _, _, err := h.KeyOf(event); err != nil {
				t.Errorf("%v mode, %s: %v", mode, event, err)
			}
		}
	}
}

// A function wrapper's argument is what json.Marshal writes: a float64 is
// always exact, an int64 past 2^53 is refused in TypeScript mode alone.
func TestInexactNumbersInFunctionArguments(t *testing.T) {
	t.Parallel()
	type order struct {
		ID     int64
		Amount float64
	}
	run := func(ctx context.Context, o order) (string, error) { return "done", nil }
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			f, err := newFunc("charge", idempotencytest.NewStore(), run, idempotency.WithCompatibility(mode))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f(context.Background(), order{ID: 1 << 53, Amount: 0.1 + 0.2}); err != nil {
				t.Errorf("an ID of 2^53 and an amount of 0.1+0.2: %v", err)
			}
			var store idempotency.Store = untouchedStore{t}
			if mode == idempotency.PowertoolsPython {
				store = idempotencytest.NewStore()
			}
			g, err := newFunc("charge", store, run, idempotency.WithCompatibility(mode))
			if err != nil {
				t.Fatal(err)
			}
			_, err = g(context.Background(), order{ID: 1<<53 + 1})
			inexact, ok := errors.AsType[*idempotency.InexactNumberError](err)
			switch {
			case mode == idempotency.PowertoolsPython && err != nil:
				t.Errorf("Python mode refuses an int64 past 2^53: %v", err)
			case mode == idempotency.PowertoolsTypeScript && (!ok || !errors.As(err, new(*idempotency.InvalidEventError)) || inexact.Path != "ID" || inexact.Number != "9007199254740993"):
				t.Errorf("TypeScript mode, an ID past 2^53: error %v, want an *InvalidEventError with an *InexactNumberError at ID", err)
			}
		})
	}
}

// TestInfinitiesRefused validates on sum(), which overflows to infinity
// for both events: Python would hash Infinity, TypeScript null, for
// either, and the second would get the first's response. Each is refused
// before any store call, naming the mode and the number, in every format
// (the own format's encoding/json refuses infinities too).
func TestInfinitiesRefused(t *testing.T) {
	t.Parallel()
	for _, compat := range append([]idempotency.Compatibility{idempotency.OwnFormat}, modes...) {
		for _, validation := range []string{"sum(amounts)", "[sum(amounts), currency]", "{total: sum(amounts)}", "avg([sum(amounts), `1`])"} {
			t.Run(compat.String()+" "+validation, func(t *testing.T) {
				var e echo
				h := idempotency.Wrap(untouchedStore{t}, e.handle, idempotency.WithKeyPrefix(prefix), idempotency.WithCompatibility(compat),
					idempotency.WithEventKey("id"), idempotency.WithPayloadValidation(validation))
				for _, event := range []string{`{"id":"a","amounts":[1e308,1e308]}`, `{"id":"a","amounts":[1.5e308,1e308],"currency":"EUR"}`} {
					_, err := h.Invoke(context.Background(), []byte(event))
					ie, ok := errors.AsType[*idempotency.InvalidEventError](err)
					if !ok || ie.Expression != validation {
						t.Errorf("%s: %v; want an *InvalidEventError for %s", event, err, validation)
					}
					if inexact, ok := errors.AsType[*idempotency.InexactNumberError](err); compat != idempotency.OwnFormat && (!ok || inexact.Compatibility != compat || inexact.Number != "+Inf") {
						t.Errorf("%s: %v; want an *InexactNumberError of %v for +Inf", event, err, compat)
					}
				}
				if e.calls != 0 {
					t.Errorf("the handler ran %d times", e.calls)
				}
			})
		}
	}
}
