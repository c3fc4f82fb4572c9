package responsestore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

// plainStore is an in-memory Store that is not an Invoker.
type plainStore struct{ mem *idempotencytest.Store }

func (p plainStore) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	return p.mem.Acquire(ctx, rec, now)
}
func (p plainStore) Complete(ctx context.Context, rec *idempotency.Record) error {
	return p.mem.Complete(ctx, rec)
}
func (p plainStore) MarkUncertain(ctx context.Context, rec *idempotency.Record) error {
	return p.mem.MarkUncertain(ctx, rec)
}
func (p plainStore) Release(ctx context.Context, key, token string) error {
	return p.mem.Release(ctx, key, token)
}
func (p plainStore) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	return p.mem.Get(ctx, key)
}
func (p plainStore) Reclaim(ctx context.Context, rec *idempotency.Record, token string) error {
	return p.mem.Reclaim(ctx, rec, token)
}

type invocationKey struct{}

// invokerStore marks the contexts it makes, so that a test can see that
// the wrapped store's StageWrites is the inner one's.
type invokerStore struct{ plainStore }

func (invokerStore) StageWrites(ctx context.Context) context.Context {
	return context.WithValue(ctx, invocationKey{}, "inner")
}

// The wrapped store implements Invoker exactly when the inner store does,
// and its methods are the inner store's.
func TestOptionalInterfaces(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		inner   func(*idempotencytest.Store) idempotency.Store
		invoker bool
	}{
		{"plain", func(m *idempotencytest.Store) idempotency.Store { return plainStore{m} }, false},
		{"invoker", func(m *idempotencytest.Store) idempotency.Store { return invokerStore{plainStore{m}} }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := idempotencytest.NewStore()
			s := mustNew(t, tc.inner(mem), responsestore.WithAEAD(newGCM(randomKey())), responsestore.WithFunctionName("fn"))
			inv, isInvoker := s.(idempotency.Invoker)
			if isInvoker != tc.invoker {
				t.Fatalf("Invoker %v, want %v", isInvoker, tc.invoker)
			}
			if isInvoker {
				if got := inv.StageWrites(t.Context()).Value(invocationKey{}); got != "inner" {
					t.Fatalf("StageWrites is not the inner store's (value %v)", got)
				}
			}
			checkReclaim(t, s, mem)
		})
	}
}

// checkReclaim reclaims an UNCERTAIN record through the wrapper, with a
// response, which is stored encrypted and read back.
func checkReclaim(t *testing.T, s idempotency.Store, mem *idempotencytest.Store) {
	t.Helper()
	now := time.Now()
	held := &idempotency.Record{Key: "k", Status: idempotency.StatusUncertain, LeaseToken: "a", Expiry: now.Add(time.Hour)}
	mem.Put(held)
	next := &idempotency.Record{Key: "k", Status: idempotency.StatusUncertain, LeaseToken: "b", Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute), Response: []byte(`"r"`)}
	if err := s.Reclaim(t.Context(), next, "a"); err != nil {
		t.Fatalf("Reclaim: %v", err)
	}
	if got := stored(t, mem, "k"); string(got) == `"r"` {
		t.Fatal("Reclaim stored the response in the clear")
	}
	if got := replayed(t, s, "k"); string(got) != `"r"` {
		t.Fatalf("read back %q", got)
	}
	// The same Reclaim again, as after a lost reply, finds its own record;
	// another invocation's, with the token it read, does not.
	if err := s.Reclaim(t.Context(), next, "a"); err != nil {
		t.Fatalf("retried Reclaim = %v, want success", err)
	}
	other := *next
	other.LeaseToken = "c"
	if err := s.Reclaim(t.Context(), &other, "a"); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("another invocation's Reclaim = %v, want ErrLeaseLost", err)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "")
	s3, k := newMemS3(), newMemKMS("key")
	aead := newGCM(randomKey())
	tests := map[string]struct {
		opts []responsestore.Option
		name string
	}{
		"negative-compression":   {[]responsestore.Option{responsestore.WithCompression(-1)}, "responsestore.WithCompression"},
		"nil-s3":                 {[]responsestore.Option{responsestore.WithS3(nil, "b")}, "responsestore.WithS3"},
		"no-bucket":              {[]responsestore.Option{responsestore.WithS3(s3, "")}, "responsestore.WithS3"},
		"threshold-without-s3":   {[]responsestore.Option{responsestore.WithOffloadThreshold(10)}, "responsestore.WithOffloadThreshold"},
		"prefix-without-s3":      {[]responsestore.Option{responsestore.WithObjectPrefix("p/")}, "responsestore.WithObjectPrefix"},
		"negative-threshold":     {[]responsestore.Option{responsestore.WithS3(s3, "b"), responsestore.WithOffloadThreshold(-1)}, "responsestore.WithOffloadThreshold"},
		"kms-and-aead":           {[]responsestore.Option{responsestore.WithKMS(k, "key"), responsestore.WithAEAD(aead), responsestore.WithFunctionName("fn")}, "responsestore.WithKMS"},
		"nil-kms":                {[]responsestore.Option{responsestore.WithKMS(nil, "key"), responsestore.WithFunctionName("fn")}, "responsestore.WithKMS"},
		"no-key-id":              {[]responsestore.Option{responsestore.WithKMS(k, ""), responsestore.WithFunctionName("fn")}, "responsestore.WithKMS"},
		"kms-without-function":   {[]responsestore.Option{responsestore.WithKMS(k, "key")}, "responsestore.WithFunctionName"},
		"nil-aead":               {[]responsestore.Option{responsestore.WithAEAD(nil)}, "responsestore.WithAEAD"},
		"cache-without-kms":      {[]responsestore.Option{responsestore.WithDataKeyCache(time.Minute, 10)}, "responsestore.WithDataKeyCache"},
		"cache-negative-age":     {[]responsestore.Option{responsestore.WithKMS(k, "key"), responsestore.WithFunctionName("fn"), responsestore.WithDataKeyCache(-time.Second, 10)}, "responsestore.WithDataKeyCache"},
		"cache-no-uses":          {[]responsestore.Option{responsestore.WithKMS(k, "key"), responsestore.WithFunctionName("fn"), responsestore.WithDataKeyCache(time.Minute, 0)}, "responsestore.WithDataKeyCache"},
		"kms-empty-function-opt": {[]responsestore.Option{responsestore.WithKMS(k, "key"), responsestore.WithFunctionName("")}, "responsestore.WithFunctionName"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := responsestore.New(idempotencytest.NewStore(), tc.opts...)
			e, ok := errors.AsType[*idempotency.ConfigError](err)
			if !ok || e.Name != tc.name {
				t.Fatalf("New = %v, want a ConfigError naming %s", err, tc.name)
			}
		})
	}
	if _, err := responsestore.New(nil); err == nil {
		t.Fatal("New(nil) succeeded")
	}
	t.Run("function-from-environment", func(t *testing.T) {
		t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "payments")
		if _, err := responsestore.New(idempotencytest.NewStore(), responsestore.WithKMS(k, "key"), nil); err != nil {
			t.Fatal(err)
		}
	})
}
