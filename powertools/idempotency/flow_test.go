package idempotency_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/fake"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

type order struct {
	OrderID string `json:"order_id"`
	Amount  int    `json:"amount"`
}

type receipt struct {
	OrderID string `json:"order_id"`
	Charged int    `json:"charged"`
}

const prefix = "orders"

// keyOf is the key the middleware must derive for order_id id: the prefix,
// "#", and the SHA-256 of the JSON string.
func keyOf(id string) string {
	sum := sha256.Sum256([]byte(`"` + id + `"`))
	return prefix + "#" + hex.EncodeToString(sum[:])
}

// hashOf is the payload hash of a JSON integer written as n.
func hashOf(n string) string {
	sum := sha256.Sum256([]byte(n))
	return hex.EncodeToString(sum[:])
}

// fixture is a handler over an in-memory store with a fake clock, counting
// the handler's calls.
type fixture struct {
	store *idempotencytest.Store
	clock *fake.Clock
	logs  *fake.Log
	calls atomic.Int32
	h     *idempotency.Handler
}

// newFixture builds the fixture; seed may put records in the store first,
// and handler, when non-nil, replaces the default handler.
func newFixture(t *testing.T, handler func(context.Context, order) (receipt, error), opts ...idempotency.Option) *fixture {
	t.Helper()
	f := &fixture{store: idempotencytest.NewStore(), clock: newFakeClock(), logs: &fake.Log{}}
	fn := func(ctx context.Context, o order) (receipt, error) {
		f.calls.Add(1)
		if handler != nil {
			return handler(ctx, o)
		}
		return receipt{OrderID: o.OrderID, Charged: o.Amount}, nil
	}
	base := []idempotency.Option{
		idempotency.WithKeyPrefix(prefix),
		idempotency.WithEventKey("order_id"),
		idempotency.WithClock(f.clock.Now),
		idempotency.WithLogger(slog.New(f.logs)),
	}
	h, err := idempotency.New(f.store, fn, append(base, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	f.h = h
	return f
}

// invoke calls the handler under a context with a deadline one minute
// ahead of the fake clock, as Lambda's would be.
func (f *fixture) invoke(t *testing.T, event string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), f.clock.Now().Add(time.Minute))
	defer cancel()
	return f.h.Invoke(ctx, []byte(event))
}

func TestFlows(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	isBoom := func(err error) bool { return errors.Is(err, errBoom) }
	const event = `{"order_id":"o-1","amount":5}`
	const response = `{"order_id":"o-1","charged":5}`
	type invocation struct {
		event   string
		want    string           // the response, when wantErr is nil
		wantErr func(error) bool // nil: success
	}
	tests := []struct {
		name      string
		handler   func(context.Context, order) (receipt, error)
		opts      []idempotency.Option
		seed      func(s *idempotencytest.Store, now time.Time)
		calls     []invocation
		wantRuns  int32
		wantState idempotency.Status // of keyOf("o-1") at the end; "" for none
	}{
		{
			name:      "new key runs the handler and stores its response",
			calls:     []invocation{{event: event, want: response}},
			wantRuns:  1,
			wantState: idempotency.StatusComplete,
		},
		{
			name:      "duplicate replays the stored bytes",
			calls:     []invocation{{event: event, want: response}, {event: event, want: response}},
			wantRuns:  1,
			wantState: idempotency.StatusComplete,
		},
		{
			name: "duplicate with fields reordered replays",
			calls: []invocation{
				{event: event, want: response},
				{event: `{ "amount": 5, "order_id": "o-1" }`, want: response},
			},
			wantRuns:  1,
			wantState: idempotency.StatusComplete,
		},
		{
			name: "live IN_PROGRESS record of another invocation",
			seed: func(s *idempotencytest.Store, now time.Time) {
				s.Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusInProgress,
					Expiry: now.Add(time.Hour), LeaseEnd: now.Add(30 * time.Second), LeaseToken: "other"})
			},
			calls:     []invocation{{event: event, wantErr: isA[*idempotency.InProgressError]}},
			wantRuns:  0,
			wantState: idempotency.StatusInProgress,
		},
		{
			name: "IN_PROGRESS record whose lease ended is taken over",
			seed: func(s *idempotencytest.Store, now time.Time) {
				s.Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusInProgress,
					Expiry: now.Add(time.Hour), LeaseEnd: now.Add(-time.Second), LeaseToken: "crashed"})
			},
			calls:     []invocation{{event: event, want: response}},
			wantRuns:  1,
			wantState: idempotency.StatusComplete,
		},
		{
			name: "expired COMPLETE record runs the handler again",
			seed: func(s *idempotencytest.Store, now time.Time) {
				s.Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusComplete,
					Expiry: now.Add(-time.Second), Response: []byte(`"stale"`)})
			},
			calls:     []invocation{{event: event, want: response}},
			wantRuns:  1,
			wantState: idempotency.StatusComplete,
		},
		{
			name: "payload validation: same payload replays",
			opts: []idempotency.Option{idempotency.WithPayloadValidation("amount")},
			calls: []invocation{
				{event: event, want: response},
				{event: `{"amount":5,"order_id":"o-1"}`, want: response},
			},
			wantRuns:  1,
			wantState: idempotency.StatusComplete,
		},
		{
			name: "payload validation: another payload on a COMPLETE record conflicts",
			opts: []idempotency.Option{idempotency.WithPayloadValidation("amount")},
			calls: []invocation{
				{event: event, want: response},
				{event: `{"order_id":"o-1","amount":6}`, wantErr: isA[*idempotency.PayloadConflictError]},
			},
			wantRuns:  1,
			wantState: idempotency.StatusComplete,
		},
		{
			name: "payload validation: another payload on an IN_PROGRESS record conflicts",
			opts: []idempotency.Option{idempotency.WithPayloadValidation("amount")},
			seed: func(s *idempotencytest.Store, now time.Time) {
				s.Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusInProgress, PayloadHash: hashOf("6"),
					Expiry: now.Add(time.Hour), LeaseEnd: now.Add(30 * time.Second), LeaseToken: "other"})
			},
			calls:     []invocation{{event: event, wantErr: isA[*idempotency.PayloadConflictError]}},
			wantState: idempotency.StatusInProgress,
		},
		{
			name: "payload validation: a record stored without a hash conflicts",
			opts: []idempotency.Option{idempotency.WithPayloadValidation("amount")},
			seed: func(s *idempotencytest.Store, now time.Time) {
				s.Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusComplete,
					Expiry: now.Add(time.Hour), Response: []byte(response)})
			},
			calls:     []invocation{{event: event, wantErr: isA[*idempotency.PayloadConflictError]}},
			wantState: idempotency.StatusComplete,
		},
		{
			name:      "handler error releases the key, so a retry runs again",
			handler:   func(context.Context, order) (receipt, error) { return receipt{}, errBoom },
			calls:     []invocation{{event: event, wantErr: isBoom}, {event: event, wantErr: isBoom}},
			wantRuns:  2,
			wantState: "",
		},
		{
			name: "corrupted record: the handler does not run",
			seed: func(s *idempotencytest.Store, now time.Time) {
				s.Put(&idempotency.Record{Key: keyOf("o-1"), Status: "DONE?", Expiry: now.Add(time.Hour)})
			},
			calls:     []invocation{{event: event, wantErr: isA[*idempotency.CorruptedRecordError]}},
			wantState: "DONE?",
		},
		{
			name:      "missing key, not required: runs without a record",
			calls:     []invocation{{event: `{"amount":5}`, want: `{"order_id":"","charged":5}`}, {event: `{"amount":5}`, want: `{"order_id":"","charged":5}`}},
			wantRuns:  2,
			wantState: "",
		},
		{
			name:      "missing key, required: MissingKeyError and no run",
			opts:      []idempotency.Option{idempotency.WithKeyRequired(true)},
			calls:     []invocation{{event: `{"order_id":null}`, wantErr: isA[*idempotency.MissingKeyError]}},
			wantState: "",
		},
		{
			name:      "disabled: every call runs, nothing is stored",
			opts:      []idempotency.Option{idempotency.WithDisabled(true)},
			calls:     []invocation{{event: event, want: response}, {event: event, want: response}},
			wantRuns:  2,
			wantState: "",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.handler, tc.opts...)
			if tc.seed != nil {
				tc.seed(f.store, f.clock.Now())
			}
			for i, c := range tc.calls {
				got, err := f.invoke(t, c.event)
				switch {
				case c.wantErr != nil:
					if !c.wantErr(err) {
						t.Fatalf("call %d: err = %v, want another", i, err)
					}
				case err != nil:
					t.Fatalf("call %d: %v", i, err)
				case string(got) != c.want:
					t.Fatalf("call %d: response %s, want %s", i, got, c.want)
				}
			}
			if got := f.calls.Load(); got != tc.wantRuns {
				t.Errorf("handler ran %d times, want %d", got, tc.wantRuns)
			}
			var state idempotency.Status
			for _, r := range f.store.Records() {
				if r.Key == keyOf("o-1") {
					state = r.Status
				}
			}
			if state != tc.wantState {
				t.Errorf("record state %q, want %q", state, tc.wantState)
			}
		})
	}
}

func TestUndecodableEventReleasesTheKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	_, err := f.invoke(t, `{"order_id":"o-1","amount":"five"}`)
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		t.Fatalf("err = %v, want the *json.UnmarshalTypeError that encoding/json gives", err)
	}
	if n := len(f.store.Records()); n != 0 {
		t.Errorf("%d records left, want the key released", n)
	}
	if f.calls.Load() != 0 {
		t.Errorf("handler ran on an event it cannot decode")
	}
}

func TestInProgressErrorCarriesKeyAndLeaseEnd(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	leaseEnd := f.clock.Now().Add(30 * time.Second)
	f.store.Put(&idempotency.Record{Key: keyOf("o-1"), Status: idempotency.StatusInProgress,
		Expiry: f.clock.Now().Add(time.Hour), LeaseEnd: leaseEnd, LeaseToken: "other"})
	_, err := f.invoke(t, `{"order_id":"o-1"}`)
	var ipe *idempotency.InProgressError
	if !errors.As(err, &ipe) || ipe.Key != keyOf("o-1") || !ipe.LeaseEnd.Equal(leaseEnd) {
		t.Fatalf("err = %#v, want *InProgressError{%s, %v}", err, keyOf("o-1"), leaseEnd)
	}
}

func TestPayloadConflictErrorCarriesHashes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, idempotency.WithPayloadValidation("amount"))
	f.invoke(t, `{"order_id":"o-1","amount":5}`)
	_, err := f.invoke(t, `{"order_id":"o-1","amount":6}`)
	var pce *idempotency.PayloadConflictError
	if !errors.As(err, &pce) || pce.Key != keyOf("o-1") || pce.StoredHash != hashOf("5") || pce.EventHash != hashOf("6") {
		t.Fatalf("err = %#v, want the key and both hashes", err)
	}
}
