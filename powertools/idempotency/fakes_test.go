package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gopowertools/lambda/internal/testing/fake"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// isA reports whether err's tree holds an E, one of the package's error
// types: a table's check of an error.
func isA[E error](err error) bool {
	_, ok := errors.AsType[E](err)
	return ok
}

// newFakeClock is a clock a test moves by hand. It starts at the real time,
// on a whole second, so that context deadlines derived from it are in the
// future for the real clock that package context uses.
func newFakeClock() *fake.Clock {
	return fake.NewClock(time.Now().Truncate(time.Second))
}

// tooLargeStore refuses to complete a record whose response is longer than
// limit, as DynamoDB refuses an item over 400 KB.
type tooLargeStore struct {
	idempotency.Store
	limit int
}

func (s *tooLargeStore) Complete(ctx context.Context, rec *idempotency.Record) error {
	if len(rec.Response) > s.limit {
		return fmt.Errorf("fake: item of %d bytes: %w", len(rec.Response), idempotency.ErrRecordTooLarge)
	}
	return s.Store.Complete(ctx, rec)
}

// failingStore fails the methods named in fail with err.
type failingStore struct {
	idempotency.Store
	fail map[string]error
}

func (s *failingStore) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	if err := s.fail["acquire"]; err != nil {
		return nil, err
	}
	return s.Store.Acquire(ctx, rec, now)
}

func (s *failingStore) Complete(ctx context.Context, rec *idempotency.Record) error {
	if err := s.fail["complete"]; err != nil {
		return err
	}
	return s.Store.Complete(ctx, rec)
}

func (s *failingStore) Release(ctx context.Context, key, token string) error {
	if err := s.fail["release"]; err != nil {
		return err
	}
	return s.Store.Release(ctx, key, token)
}

// staleStore always reports, as live, a record that expired long ago: a
// store whose clock disagrees with the middleware's.
type staleStore struct {
	idempotency.Store
	calls int
}

func (s *staleStore) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	s.calls++
	return &idempotency.Record{Key: rec.Key, Status: idempotency.StatusComplete, Expiry: now.Add(-time.Hour), Response: []byte(`"old"`)}, nil
}

// newFunc is WrapFunc returning the *ConfigError it panics with, for the
// tests of a configuration.
func newFunc[In, Out any](name string, store idempotency.Store, fn func(context.Context, In) (Out, error), opts ...idempotency.Option) (f func(context.Context, In) (Out, error), err error) {
	if ce := idempotencytest.ConfigError(func() { f = idempotency.WrapFunc(name, store, fn, opts...) }); ce != nil {
		return nil, ce
	}
	return f, nil
}
