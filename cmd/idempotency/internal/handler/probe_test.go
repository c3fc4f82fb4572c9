package handler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// TestDeliver: what a delivery meets, record by record, is what the
// library's own handler does with that record in its store.
func TestDeliver(t *testing.T) {
	setProcessEnv(t, nil)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	f := Function{Code: code("EventKey", "order_id", "PayloadValidation", "amount"), Env: env(FunctionNameEnv, "orders")}
	w, err := New(f, clock)
	if err != nil {
		t.Fatal(err)
	}
	const event = `{"order_id":"o-1","amount":10}`
	none := func(context.Context, string) (*idempotency.Record, error) { return nil, nil }
	first, err := w.Deliver(t.Context(), []byte(event), none)
	if err != nil || !first.Runs || first.Err != nil || !strings.HasPrefix(first.Key, "orders#") || first.PayloadHash == "" {
		t.Fatalf("a first delivery = %+v, %v; want it to run the handler, with a key of orders and a hash", first, err)
	}
	key, hash := first.Key, first.PayloadHash

	// The library's own handler, over an in-memory store holding the
	// same record, says the same.
	lib := idempotencytest.NewStore()
	ran := false
	h, err := idempotency.New(lib, func(context.Context, map[string]any) (string, error) { ran = true; return "ran", nil },
		quiet, idempotency.WithClock(clock), idempotency.WithKeyPrefix("orders"),
		idempotency.WithEventKey("order_id"), idempotency.WithPayloadValidation("amount"))
	if err != nil {
		t.Fatal(err)
	}

	live := now.Add(time.Hour).Truncate(time.Second)
	for _, tt := range []struct {
		name string
		rec  *idempotency.Record
		// runs, or the error a delivery gets.
		runs bool
		want any
	}{
		{"none", nil, true, nil},
		{"completed", &idempotency.Record{Status: idempotency.StatusComplete, Expiry: live, PayloadHash: hash, Response: []byte(`"stored"`)}, false, nil},
		{"completed, another payload", &idempotency.Record{Status: idempotency.StatusComplete, Expiry: live, PayloadHash: "other", Response: []byte(`"stored"`)}, false, new(*idempotency.PayloadConflictError)},
		{"completed, no hash", &idempotency.Record{Status: idempotency.StatusComplete, Expiry: live, Response: []byte(`"stored"`)}, false, new(*idempotency.PayloadConflictError)},
		{"completed, not stored", &idempotency.Record{Status: idempotency.StatusComplete, Expiry: live, PayloadHash: hash, ResponseOmitted: true}, false, new(*idempotency.ResponseNotStoredError)},
		{"expired", &idempotency.Record{Status: idempotency.StatusComplete, Expiry: now.Add(-time.Second), PayloadHash: hash}, true, nil},
		{"in progress", &idempotency.Record{Status: idempotency.StatusInProgress, Expiry: live, LeaseEnd: now.Add(time.Minute), PayloadHash: hash, LeaseToken: "t"}, false, new(*idempotency.InProgressError)},
		{"in progress, another payload", &idempotency.Record{Status: idempotency.StatusInProgress, Expiry: live, LeaseEnd: now.Add(time.Minute), PayloadHash: "other", LeaseToken: "t"}, false, new(*idempotency.PayloadConflictError)},
		{"lease ended", &idempotency.Record{Status: idempotency.StatusInProgress, Expiry: live, LeaseEnd: now.Add(-time.Minute), PayloadHash: hash, LeaseToken: "t"}, true, nil},
		{"abandoned under AbandonBlock", &idempotency.Record{Status: idempotency.StatusInProgress, Expiry: live, LeaseEnd: live, Deadline: now.Add(-time.Minute), PayloadHash: hash, LeaseToken: "t"}, false, new(*idempotency.AbandonedError)},
		{"uncertain", &idempotency.Record{Status: idempotency.StatusUncertain, Expiry: live, PayloadHash: hash, LeaseToken: "t"}, false, new(*idempotency.UncertainError)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var rec *idempotency.Record
			if tt.rec != nil {
				rec = tt.rec
				rec.Key = key
			}
			d, err := w.Deliver(t.Context(), []byte(event), func(_ context.Context, k string) (*idempotency.Record, error) {
				if k != key {
					return nil, fmt.Errorf("looked up %q, want %q", k, key)
				}
				return rec, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if d.Runs != tt.runs || (tt.want == nil) != (d.Err == nil) || (tt.want != nil && !errors.As(d.Err, tt.want)) || d.Record != rec || d.Key != key {
				t.Fatalf("Deliver = %+v; want runs %v, error %T", d, tt.runs, tt.want)
			}

			// The library's handler over a store holding rec.
			lib.Release(t.Context(), key, "t")
			if rec != nil {
				if existing, err := lib.Acquire(t.Context(), rec, now.Add(-2*time.Hour)); err != nil || existing != nil {
					t.Fatal(existing, err)
				}
			}
			ran = false
			_, libErr := h.Invoke(t.Context(), []byte(event))
			if ran != d.Runs || fmt.Sprintf("%T", libErr) != fmt.Sprintf("%T", d.Err) {
				t.Errorf("the library's handler ran %v, got %T; the probe says %v, %T", ran, libErr, d.Runs, d.Err)
			}
			lib.Release(t.Context(), key, tokenOf(lib, key))
		})
	}
}

// tokenOf returns the lease token of the record of key in s, or "".
func tokenOf(s *idempotencytest.Store, key string) string {
	rec, err := s.Get(context.Background(), key)
	if err != nil {
		return ""
	}
	return rec.LeaseToken
}

// TestDeliverEvents: events that the function does not key, and
// functions that keep no record, are told apart.
func TestDeliverEvents(t *testing.T) {
	setProcessEnv(t, nil)
	lookup := func(context.Context, string) (*idempotency.Record, error) { return nil, nil }
	deliver := func(f Function, event string) *Delivery {
		t.Helper()
		w, err := New(f, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		d, err := w.Deliver(t.Context(), []byte(event), lookup)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	name := env(FunctionNameEnv, "orders")
	if d := deliver(Function{Code: code("EventKey", "order_id"), Env: name}, `{"amount":1}`); !d.Runs || d.Outcome != idempotency.OutcomeNoKey || d.Key != "" {
		t.Errorf("no key: %+v", d)
	}
	if d := deliver(Function{Code: code("EventKey", "order_id", "KeyRequired", "true"), Env: name}, `{"amount":1}`); d.Runs || !errors.As(d.Err, new(*idempotency.MissingKeyError)) {
		t.Errorf("no key, one required: %+v", d)
	}
	if d := deliver(Function{Env: name}, `{`); d.Runs || !errors.As(d.Err, new(*idempotency.InvalidEventError)) {
		t.Errorf("not JSON: %+v", d)
	}
	disabled := env(FunctionNameEnv, "orders", DisabledEnv, "true")
	if d := deliver(Function{Env: disabled}, `{"a":1}`); !d.Runs || d.Outcome != "" || !strings.HasPrefix(d.Key, "orders#") {
		t.Errorf("disabled: %+v", d)
	}
	// A function wrapper: the key is its argument's, under
	// <function>.<name>.
	wrapper := Function{Code: code("WrapFunc", "orders.fulfil", "EventKey", "order_id"), Env: name}
	if d := deliver(wrapper, `{"order_id":"o-1","amount":1}`); !d.Runs || !strings.HasPrefix(d.Key, "orders.orders.fulfil#") {
		t.Errorf("a function wrapper: %+v", d)
	}

	w, err := New(Function{Env: name}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	failed := errors.New("the store is down")
	if _, err := w.Deliver(t.Context(), []byte(`{"a":1}`), func(context.Context, string) (*idempotency.Record, error) { return nil, failed }); !errors.Is(err, failed) {
		t.Errorf("a failed lookup: %v", err)
	}
}

// TestMeet: a record looked up by its key meets what a delivery of the
// same request meets, without the payload check.
func TestMeet(t *testing.T) {
	setProcessEnv(t, nil)
	now := time.Now()
	w, err := Records(Function{Code: code("WrapFunc", "orders.fulfil", "PayloadValidation", "amount")}, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	rec := &idempotency.Record{Key: "orders#k", Status: idempotency.StatusComplete, Expiry: now.Add(time.Hour), PayloadHash: "h", Response: []byte(`{}`)}
	holding := func(rec *idempotency.Record, err error) Lookup {
		return func(_ context.Context, key string) (*idempotency.Record, error) {
			if key != "orders#k" {
				t.Errorf("looked up %q", key)
			}
			return rec, err
		}
	}
	d, err := w.Meet(t.Context(), "orders#k", holding(rec, nil))
	if err != nil || d.Runs || d.Err != nil || d.Outcome != idempotency.OutcomeReplayed || d.Key != "orders#k" {
		t.Errorf("Meet of a completed record = %+v, %v", d, err)
	}
	if d, err := w.Meet(t.Context(), "orders#k", holding(nil, nil)); err != nil || !d.Runs || d.Outcome != idempotency.OutcomeNew {
		t.Errorf("Meet of no record = %+v, %v", d, err)
	}
	// A record that cannot be read is what the function meets too.
	bad := &idempotency.CorruptedRecordError{Key: "orders#k", Reason: "unknown status"}
	if d, err := w.Meet(t.Context(), "orders#k", holding(nil, bad)); err != nil || d.Runs || d.Err != bad || d.Corrupted != bad || d.Outcome != idempotency.OutcomeStoreError {
		t.Errorf("Meet of a corrupted record = %+v, %v", d, err)
	}
}

// TestDeliverWhatTheCommandCannotSee: a delivery that runs the handler
// says so with the outcome of its success, and what it meets instead when
// the event does not decode into the handler's type; one that meets an
// invocation in progress says what comes once that invocation has ended,
// by the key's abandon policy. Each answer is the engine's.
func TestDeliverWhatTheCommandCannotSee(t *testing.T) {
	setProcessEnv(t, nil)
	now := time.Now()
	none := func(context.Context, string) (*idempotency.Record, error) { return nil, nil }
	w, err := New(Function{Code: code("EventKey", "order_id"), Env: env(FunctionNameEnv, "orders")}, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	d, err := w.Deliver(t.Context(), []byte(`{"order_id":"o-1","amount":"abc"}`), none)
	if err != nil || !d.Runs || d.Outcome != idempotency.OutcomeNew || d.Undecodable == nil ||
		d.Undecodable.Runs || d.Undecodable.Outcome != idempotency.OutcomeUndecodableEvent || !errors.As(d.Undecodable.Err, new(*idempotency.UndecodableEventError)) {
		t.Errorf("a first delivery = %+v (unless %+v), %v", d, d.Undecodable, err)
	}
	noKey, err := w.Deliver(t.Context(), []byte(`{"amount":1}`), none)
	if err != nil || !noKey.Runs || noKey.Outcome != idempotency.OutcomeNoKey || noKey.Undecodable == nil || noKey.Undecodable.Outcome != idempotency.OutcomeUndecodableEvent {
		t.Errorf("an event without key = %+v, %v", noKey, err)
	}
	wrapper, err := New(Function{Code: code("WrapFunc", "orders.fulfil"), Env: env(FunctionNameEnv, "orders")}, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	if d, err := wrapper.Deliver(t.Context(), []byte(`{"order_id":"o-1"}`), none); err != nil || !d.Runs || d.Undecodable != nil {
		t.Errorf("a function wrapper's first call = %+v, %v; its argument is decoded by the function's code", d, err)
	}

	deadline := now.Add(3 * time.Second)
	for _, tt := range []struct {
		policy string
		rec    idempotency.Record
		then   any // the error after, or nil for a run
	}{
		{"retry", idempotency.Record{LeaseEnd: deadline}, nil},
		{"block", idempotency.Record{LeaseEnd: now.Add(time.Hour), Deadline: deadline}, new(*idempotency.AbandonedError)},
		{"uncertain", idempotency.Record{LeaseEnd: now.Add(time.Hour), Deadline: deadline}, new(*idempotency.UncertainError)},
	} {
		t.Run(tt.policy, func(t *testing.T) {
			w, err := New(Function{Code: code("EventKey", "order_id", "AbandonPolicy", tt.policy), Env: env(FunctionNameEnv, "orders")}, func() time.Time { return now })
			if err != nil {
				t.Fatal(err)
			}
			rec := tt.rec
			rec.Status, rec.Expiry, rec.LeaseToken = idempotency.StatusInProgress, now.Add(time.Hour), "t"
			d, err := w.Deliver(t.Context(), []byte(`{"order_id":"o-1"}`), func(context.Context, string) (*idempotency.Record, error) { return &rec, nil })
			if err != nil {
				t.Fatal(err)
			}
			e, ok := errors.AsType[*idempotency.InProgressError](d.Err)
			if !ok || !e.LeaseEnd.Equal(deadline) || d.Then == nil || !d.Then.At.Equal(deadline.Add(idempotency.AbandonGrace)) {
				t.Fatalf("Deliver = %+v (then %+v); want an InProgressError until the deadline, then an answer past it", d, d.Then)
			}
			if (tt.then == nil) != d.Then.Runs || (tt.then != nil && !errors.As(d.Then.Err, tt.then)) {
				t.Errorf("then = %+v; want %T", d.Then, tt.then)
			}
		})
	}
}

// TestSettings: each setting says where it came from, and a value that
// cannot be read is reported against its source: a declaration, or the
// variable, as the library reports it.
func TestSettings(t *testing.T) {
	setProcessEnv(t, nil)
	f := Function{
		Code: map[string]Setting{"EventKey": {"order_id", "--event-key"}, "Hash": {"sha1", "Metadata.Idempotency.Hash"}, "KeyRequired": {"yes", "--key-required"}},
		Env:  env(FunctionNameEnv, "orders", EventKeyEnv, "ignored", ExpiresAfterEnv, "2h", CompatibilityEnv, "python", PythonHandlerEnv, "app.handler", WaitEnv, "on"),
	}
	w, err := New(f, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range w.Settings {
		got = append(got, fmt.Sprintf("%s=%s (%s)", s.Name, s.Value, s.Source))
	}
	want := []string{
		"KeyPrefix= (<function>.<handler>: AWS_LAMBDA_FUNCTION_NAME from AWS_LAMBDA_FUNCTION_NAME in the template, PythonHandler from POWERTOOLS_IDEMPOTENCY_PYTHON_HANDLER in the template)",
		"EventKey=order_id (--event-key)",
		"PayloadValidation= (" + DefaultSource + ")",
		"KeyRequired=yes (--key-required)",
		"ExpiresAfter=2h (POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER in the template)",
		"Compatibility=python (POWERTOOLS_IDEMPOTENCY_COMPATIBILITY in the template)",
		"Hash=sha1 (Metadata.Idempotency.Hash)",
		"PythonHandler=app.handler (POWERTOOLS_IDEMPOTENCY_PYTHON_HANDLER in the template)",
		"AbandonPolicy=retry (" + DefaultSource + ")",
		WaitEnv + "=on (" + WaitEnv + " in the template)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("settings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if w.ExpiresAfter != 2*time.Hour {
		t.Errorf("ExpiresAfter = %v", w.ExpiresAfter)
	}

	for _, tt := range []struct {
		name string
		f    Function
		// declared: a *DeclarationError; else a *ConfigError naming
		// this.
		declared bool
		name2    string
	}{
		{"unknown entry", Function{Code: code("Compatibilty", "python"), Env: env(FunctionNameEnv, "f")}, true, ""},
		{"bad declared hash", Function{Code: code("Hash", "crc32"), Env: env(FunctionNameEnv, "f")}, true, ""},
		{"bad declared switch", Function{Code: code("KeyRequired", "maybe"), Env: env(FunctionNameEnv, "f")}, true, ""},
		{"short declared expiry", Function{Code: code("ExpiresAfter", "10ms"), Env: env(FunctionNameEnv, "f")}, false, "WithExpiresAfter"},
		{"bad variable", Function{Env: env(FunctionNameEnv, "f", HashEnv, "crc32")}, false, HashEnv},
		{"short variable", Function{Env: env(FunctionNameEnv, "f", ExpiresAfterEnv, "10ms")}, false, ExpiresAfterEnv},
		{"bad key path", Function{Env: env(FunctionNameEnv, "f", EventKeyEnv, "a[")}, false, EventKeyEnv},
		{"bad declared key path", Function{Code: code("EventKey", "a["), Env: env(FunctionNameEnv, "f")}, false, "WithEventKey"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.f, time.Now)
			de, declared := errors.AsType[*DeclarationError](err)
			ce, configured := errors.AsType[*idempotency.ConfigError](err)
			switch {
			case tt.declared && (!declared || !strings.HasPrefix(de.Source, "Metadata.Idempotency.")):
				t.Errorf("New = %v, want a *DeclarationError of the entry", err)
			case !tt.declared && (!configured || ce.Name != tt.name2 || declared):
				t.Errorf("New = %v, want a *ConfigError of %s", err, tt.name2)
			}
		})
	}

	// The library reads the function's name from f alone, not from the
	// process.
	t.Setenv(FunctionNameEnv, "another")
	w, err = New(Function{Code: code("WrapFunc", "w"), Env: env(FunctionNameEnv, "orders")}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := w.Deliver(t.Context(), []byte(`{"a":1}`), func(context.Context, string) (*idempotency.Record, error) { return nil, nil }); err != nil || !strings.HasPrefix(d.Key, "orders.w#") {
		t.Errorf("a function wrapper, another name in the process: %+v, %v; want the key of orders.w", d, err)
	}
}
