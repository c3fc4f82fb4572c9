package idempotency_test

import (
	"context"
	"errors"
	"fmt"
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

func (s *committingStore) NewInvocation(ctx context.Context) context.Context {
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

// TestCommittingStore checks what the middleware does with each answer of
// a store that commits staged writes with the record.
func TestCommittingStore(t *testing.T) {
	userErr := errors.New("store: staged write 0 refused")
	tests := []struct {
		name        string
		err         error
		want        []error // errors.Is targets; none: success
		wantRecord  bool    // a record is left
		wantPersist bool    // a *PersistenceError
	}{
		{"committed", nil, nil, true, false},
		{"a staged write refused", fmt.Errorf("%w: %w", idempotency.ErrNotCommitted, userErr), []error{idempotency.ErrNotCommitted, userErr}, false, false},
		{"lease lost", fmt.Errorf("%w: %w", idempotency.ErrNotCommitted, idempotency.ErrLeaseLost), []error{idempotency.ErrNotCommitted, idempotency.ErrLeaseLost}, true, true},
		{"unknown", fmt.Errorf("fake: %w", idempotency.ErrCommitUnknown), []error{idempotency.ErrCommitUnknown}, true, true},
		{"another failure is logged, not returned", errors.New("fake: throttled"), nil, true, false},
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
			if len(tt.want) == 0 && err != nil {
				t.Fatalf("err = %v, want success", err)
			}
			for _, target := range tt.want {
				if !errors.Is(err, target) {
					t.Errorf("err = %v, want %v", err, target)
				}
			}
			if errors.Is(err, idempotency.ErrPersistence) != tt.wantPersist {
				t.Errorf("err = %v, PersistenceError: want %v", err, tt.wantPersist)
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
