package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// committingStore is an [idempotency.Invoker]: it marks the handler's
// context, and its Complete checks that it gets that context back and
// fails with err.
type committingStore struct {
	*idempotencytest.Store
	err      error
	sameCtx  bool
	invoking int
}

type invocationMark struct{}

func (s *committingStore) StageWrites(ctx context.Context) context.Context {
	s.invoking++
	return context.WithValue(ctx, invocationMark{}, s.invoking)
}

func (s *committingStore) Complete(ctx context.Context, rec *idempotency.Record) error {
	s.sameCtx = ctx.Value(invocationMark{}) == s.invoking
	if s.err != nil {
		return s.err
	}
	return s.Store.Complete(ctx, rec)
}

// commitErr is a store's *CommitError for key "f" (so the test
// compares states and causes, not keys).
func commitErr(state idempotency.CommitState, err error) error {
	return &idempotency.CommitError{Key: "f", State: state, Err: err}
}

// TestCommittingStore checks what the middleware does with each answer of
// a store that commits staged writes with the record.
func TestCommittingStore(t *testing.T) {
	t.Parallel()
	userErr := errors.New("store: staged write 0 refused")
	tests := []struct {
		name        string
		err         error
		want        error                   // the caller's error, unwrapped; nil: success
		wantPersist idempotency.CommitState // else a *PersistenceError wrapping the store's *CommitError with this state
		wantRecord  bool                    // a record is left
	}{
		{"committed", nil, nil, 0, true},
		// The caller gets the store's reason as the handler's own error.
		{"a staged write refused", commitErr(idempotency.CommitRefused, userErr), userErr, 0, false},
		{"lease lost", commitErr(idempotency.CommitLeaseLost, userErr), nil, idempotency.CommitLeaseLost, true},
		{"unknown", commitErr(idempotency.CommitUnknown, userErr), nil, idempotency.CommitUnknown, true},
		{"another failure is logged, not returned", errors.New("fake: throttled"), nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &committingStore{Store: idempotencytest.NewStore(), err: tt.err}
			var sawMark bool
			f := idempotency.WrapFunc("f", store, func(ctx context.Context, n int) (int, error) {
				sawMark = ctx.Value(invocationMark{}) != nil
				return n, nil
			})
			_, err := f(context.Background(), 1)
			if tt.wantPersist != 0 {
				c, ok := errors.AsType[*idempotency.CommitError](err)
				if _, isPersistence := errors.AsType[*idempotency.PersistenceError](err); !isPersistence || !ok || c.State != tt.wantPersist || c.Err != userErr {
					t.Errorf("err = %v, want a PersistenceError wrapping a CommitError %v", err, tt.wantPersist)
				}
			} else if err != tt.want {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if got := len(store.Records()) == 1; got != tt.wantRecord {
				t.Errorf("record left: %v, want %v", got, tt.wantRecord)
			}
			if !sawMark || !store.sameCtx {
				t.Errorf("handler saw the invocation context: %v; Complete got it: %v; want both", sawMark, store.sameCtx)
			}
		})
	}
}

// formerInvoker is a store written for Invoker's former method,
// NewInvocation, alone.
type formerInvoker struct{ *idempotencytest.Store }

func (formerInvoker) NewInvocation(ctx context.Context) context.Context { return ctx }

// TestFormerInvokerRefused: a store whose staging method still has
// Invoker's former name would commit none of the writes its handler
// stages; building a wrapper over it fails, naming the new one.
func TestFormerInvokerRefused(t *testing.T) {
	t.Parallel()
	fn := func(context.Context, string) (string, error) { return "", nil }
	_, err := idempotency.New(formerInvoker{idempotencytest.NewStore()}, fn, idempotency.WithKeyPrefix("p"))
	ce, ok := errors.AsType[*idempotency.ConfigError](err)
	if !ok || ce.Name != "store" || !strings.Contains(ce.Error(), "StageWrites") {
		t.Fatalf("New over a store with NewInvocation alone: %v, want a ConfigError for store naming StageWrites", err)
	}
	if _, err := idempotency.New(&committingStore{Store: idempotencytest.NewStore()}, fn, idempotency.WithKeyPrefix("p")); err != nil {
		t.Fatalf("New over an Invoker: %v", err)
	}
}
