package dynamo

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// provider charges once per key and can time out after charging.
type provider struct {
	mu       sync.Mutex
	charges  map[string]int
	timeouts int // the next timeouts charges are made but their answer is lost
	lookups  int
	// inLookup, when set, is signalled by a lookup, which then waits for
	// release.
	inLookup, release chan struct{}
}

type payout struct {
	ID    string `json:"id"`
	Cents int    `json:"cents"`
}

var errProviderTimeout = errors.New("provider: timeout")

func (p *provider) charge(ctx context.Context, in payout) (string, error) {
	key, _ := idempotency.KeyFromContext(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.charges[key]++
	if p.timeouts > 0 {
		p.timeouts--
		return "", idempotency.Uncertain(errProviderTimeout)
	}
	return "ch_" + in.ID, nil
}

func (p *provider) lookup(_ context.Context, key string) (string, bool, error) {
	if p.inLookup != nil {
		p.inLookup <- struct{}{}
		<-p.release
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lookups++
	return "ch_found", p.charges[key] > 0, nil
}

func (p *provider) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.charges {
		n += c
	}
	return n
}

// TestUncertainOnMoto runs the uncertain state through DynamoDB: the
// provider times out after charging, the record is UNCERTAIN, and a
// duplicate reconciles it.
func TestUncertainOnMoto(t *testing.T) {
	t.Parallel()
	moto := servers[0]
	setup := func(t *testing.T) (*provider, *Store, func(payout) (string, error)) {
		p := &provider{charges: map[string]int{}, timeouts: 1}
		s := newStore(t, moto.client(t))
		pay := idempotency.WrapFunc("pay", s, p.charge, idempotency.WithEventKey("id"), idempotency.WithReconcile(p.lookup),
			idempotency.WithLease(10*time.Second))
		return p, s, func(in payout) (string, error) { return pay(context.Background(), in) }
	}
	status := func(t *testing.T, s *Store) *idempotency.Record {
		t.Helper()
		key, err := idempotencyKeyFunc("pay", "p1")
		if err != nil {
			t.Fatal(err)
		}
		rec, err := s.Get(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}

	t.Run("reconcile finds the charge", func(t *testing.T) {
		p, s, pay := setup(t)
		if _, err := pay(payout{"p1", 100}); !errors.Is(err, errProviderTimeout) {
			t.Fatalf("first call: %v, want the timeout", err)
		}
		if rec := status(t, s); rec.Status != idempotency.StatusUncertain {
			t.Fatalf("record %+v, want UNCERTAIN", rec)
		}
		got, err := pay(payout{"p1", 100})
		if err != nil || got != "ch_found" || p.total() != 1 {
			t.Fatalf("duplicate: %q, %v, charges %d; want the found charge and no second charge", got, err, p.total())
		}
		if rec := status(t, s); rec.Status != idempotency.StatusComplete || string(rec.Response) != `"ch_found"` {
			t.Errorf("record %+v, want COMPLETE with the found charge", rec)
		}
	})

	t.Run("reconcile finds no charge so the retry runs once", func(t *testing.T) {
		p, _, pay := setup(t)
		pay(payout{"p1", 100})
		p.mu.Lock()
		clear(p.charges) // the provider never got it
		p.mu.Unlock()
		got, err := pay(payout{"p1", 100})
		if err != nil || got != "ch_p1" || p.total() != 1 {
			t.Fatalf("retry: %q, %v, charges %d; want one charge by the retry", got, err, p.total())
		}
		if again, err := pay(payout{"p1", 100}); err != nil || again != got || p.total() != 1 {
			t.Errorf("replay: %q, %v, charges %d", again, err, p.total())
		}
	})

	t.Run("two duplicates at once and one reconciles", func(t *testing.T) {
		p, _, pay := setup(t)
		pay(payout{"p1", 100})
		p.inLookup, p.release = make(chan struct{}), make(chan struct{})
		first := make(chan error, 1)
		go func() {
			_, err := pay(payout{"p1", 100})
			first <- err
		}()
		<-p.inLookup // the first duplicate holds the record
		_, err := pay(payout{"p1", 100})
		var ue *idempotency.UncertainError
		if !errors.As(err, &ue) || ue.LeaseEnd.IsZero() {
			t.Errorf("second duplicate: %v, want UncertainError with the reconciler's lease", err)
		}
		close(p.release)
		if err := <-first; err != nil {
			t.Errorf("first duplicate: %v", err)
		}
		if p.lookups != 1 || p.total() != 1 {
			t.Errorf("lookups %d, charges %d; want 1 and 1", p.lookups, p.total())
		}
	})
}

// idempotencyKeyFunc is the key WrapFunc(name) gives the argument
// payout{ID: id} keyed on "id".
func idempotencyKeyFunc(name, id string) (string, error) {
	var key string
	f := idempotency.WrapFunc(name, idempotencyKeyStore{&key}, func(context.Context, payout) (string, error) { return "", nil },
		idempotency.WithEventKey("id"))
	if _, err := f(context.Background(), payout{ID: id}); !errors.Is(err, errKeyOnly) {
		return "", err
	}
	return key, nil
}
