package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// A response too large for a DynamoDB item takes the same path on the
// in-memory store as in production: the caller gets it, the record is
// completed without it, and a duplicate gets *ResponseNotStoredError
// without running the handler again.
func TestResponseOverItemLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		size      int
		storeOpts func(*idempotencytest.Store)
		stored    bool // a duplicate replays the response
	}{
		{"Small", 1 << 10, nil, true},
		{"500KB", 500 << 10, nil, false},
		{"500KBNoLimit", 500 << 10, func(s *idempotencytest.Store) { s.SetMaxItemSize(0) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := idempotencytest.NewStore()
			if tt.storeOpts != nil {
				tt.storeOpts(store)
			}
			calls := 0
			big := strings.Repeat("x", tt.size)
			h := idempotency.Wrap(store, func(context.Context, order) (string, error) {
				calls++
				return big, nil
			}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"))
			const event = `{"order_id":"o-1"}`
			want := `"` + big + `"`

			resp, err := h.Invoke(t.Context(), []byte(event))
			if err != nil || string(resp) != want {
				t.Fatalf("first call: %d bytes, %v; want the %d-byte response", len(resp), err, len(want))
			}
			resp, err = h.Invoke(t.Context(), []byte(event))
			if calls != 1 {
				t.Errorf("handler ran %d times, want 1", calls)
			}
			if tt.stored {
				if err != nil || string(resp) != want {
					t.Fatalf("duplicate: %d bytes, %v; want the stored response", len(resp), err)
				}
				return
			}
			if !errors.As(err, new(*idempotency.ResponseNotStoredError)) {
				t.Fatalf("duplicate: %d bytes, %v; want *ResponseNotStoredError", len(resp), err)
			}
			if recs := store.Records(); len(recs) != 1 || recs[0].Status != idempotency.StatusComplete || !recs[0].ResponseOmitted {
				t.Errorf("stored %d records, want one COMPLETE record with the response omitted", len(recs))
			}
		})
	}
}

// refusingStore refuses to keep any response with err.
type refusingStore struct {
	*idempotencytest.Store
	err error
}

func (s *refusingStore) Complete(ctx context.Context, rec *idempotency.Record) error {
	if len(rec.Response) > 0 {
		return s.err
	}
	return s.Store.Complete(ctx, rec)
}

// reasonedError is a store's refusal that says why.
type reasonedError struct{ err error }

func (e reasonedError) Error() string         { return e.err.Error() }
func (e reasonedError) Unwrap() error         { return e.err }
func (reasonedError) NotStoredReason() string { return "not kept here" }

// A store that cannot keep a response, for any reason, says so with
// ErrUnstorableResponse: the record is completed without the response,
// the handler does not run again, and a duplicate learns the reason the
// error gives, the one of a record too large, or that the store refused
// it.
func TestUnstorableResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason string
		err          error
	}{
		{"TooLarge", idempotency.ReasonTooLarge, fmt.Errorf("mystore: %w", idempotency.ErrRecordTooLarge)},
		{"Refused", "refused by the store", fmt.Errorf("mystore: not JSON: %w", idempotency.ErrUnstorableResponse)},
		{"Reasoned", "not kept here", reasonedError{fmt.Errorf("mystore: %w", idempotency.ErrUnstorableResponse)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &refusingStore{Store: idempotencytest.NewStore(), err: tt.err}
			calls := 0
			h := idempotency.Wrap(store, func(context.Context, order) (string, error) {
				calls++
				return "ok", nil
			}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"), idempotency.WithLogger(slog.New(slog.DiscardHandler)))
			const event = `{"order_id":"o-1"}`
			if resp, err := h.Invoke(t.Context(), []byte(event)); err != nil || string(resp) != `"ok"` {
				t.Fatalf("first call: %s, %v; want the response", resp, err)
			}
			_, err := h.Invoke(t.Context(), []byte(event))
			notStored, ok := errors.AsType[*idempotency.ResponseNotStoredError](err)
			if !ok || notStored.Reason != tt.reason || calls != 1 {
				t.Fatalf("duplicate: %v, the handler run %d times; want a ResponseNotStoredError with the reason %q, one run", err, calls, tt.reason)
			}
		})
	}
}
