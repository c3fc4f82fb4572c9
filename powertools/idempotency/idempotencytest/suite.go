package idempotencytest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// TestStore checks a store against the [idempotency.Store] contract:
// conditional acquire, takeover of expired records and passed leases,
// completion, UNCERTAIN records and release guarded by the lease token,
// one reclaimer of an UNCERTAIN record, consistent reads, the
// round trip of every field, and one winner among concurrent acquires.
// newStore is called once per subtest and may return the same store each
// time: every subtest uses its own keys.
//
// The times the suite stores are whole milliseconds, and expiries whole
// seconds, so a store that keeps more precision than DynamoDB passes too.
func TestStore(t *testing.T, newStore func(t *testing.T) idempotency.Store) {
	t.Helper()
	// Round to the second so that every expiry below is a whole second.
	base := time.Now().UTC().Truncate(time.Second)
	for _, tc := range suiteCases {
		t.Run(tc.name, func(t *testing.T) {
			s := &suite{t: t, store: newStore(t), now: base, key: fmt.Sprintf("idempotencytest#%d#%s", base.UnixNano(), tc.name)}
			tc.run(s)
		})
	}
}

// suite is the state of one subtest, with helpers that fail it.
type suite struct {
	t     *testing.T
	store idempotency.Store
	now   time.Time
	key   string
}

// inProgress returns an INPROGRESS record for s.key under token, with a
// lease of lease and an expiry of one hour from s.now.
func (s *suite) inProgress(token string, lease time.Duration) *idempotency.Record {
	return &idempotency.Record{
		Key:        s.key,
		Status:     idempotency.StatusInProgress,
		Expiry:     s.now.Add(time.Hour),
		LeaseEnd:   s.now.Add(lease),
		LeaseToken: token,
	}
}

// completed returns rec completed with response.
func completed(rec *idempotency.Record, response string) *idempotency.Record {
	c := *rec
	c.Status = idempotency.StatusComplete
	c.Response = []byte(response)
	c.CompletedAt = rec.LeaseEnd.Add(-250 * time.Millisecond)
	return &c
}

// acquire calls Acquire at now and fails the test on an error.
func (s *suite) acquire(rec *idempotency.Record, now time.Time) *idempotency.Record {
	s.t.Helper()
	existing, err := s.store.Acquire(s.t.Context(), rec, now)
	if err != nil {
		s.t.Fatalf("Acquire(%s, token %q) error: %v", rec.Key, rec.LeaseToken, err)
	}
	return existing
}

// mustAcquire acquires rec at s.now and fails the test unless it is written.
func (s *suite) mustAcquire(rec *idempotency.Record) {
	s.t.Helper()
	s.mustWrite("Acquire", rec, s.now)
}

// mustWrite acquires rec at now and fails the test unless it is written,
// over whatever record the key holds. A record carrying rec's own token is
// rec, written by an attempt whose reply was lost and retried by the
// store's client (see idempotency.Store's Acquire): a real server under
// load does drop replies.
func (s *suite) mustWrite(what string, rec *idempotency.Record, now time.Time) {
	s.t.Helper()
	if existing := s.acquire(rec, now); existing != nil && existing.LeaseToken != rec.LeaseToken {
		s.t.Fatalf("%s(%s) found %+v, want the record written", what, rec.Key, existing)
	}
}

func (s *suite) complete(rec *idempotency.Record) {
	s.t.Helper()
	if err := s.store.Complete(s.t.Context(), rec); err != nil {
		s.t.Fatalf("Complete(%s, token %q) error: %v", rec.Key, rec.LeaseToken, err)
	}
}

func (s *suite) markUncertain(rec *idempotency.Record) {
	s.t.Helper()
	if err := s.store.MarkUncertain(s.t.Context(), rec); err != nil {
		s.t.Fatalf("MarkUncertain(%s, token %q) error: %v", rec.Key, rec.LeaseToken, err)
	}
}

// wantStored fails the test unless Get returns want.
func (s *suite) wantStored(want *idempotency.Record) {
	s.t.Helper()
	got, err := s.store.Get(s.t.Context(), want.Key)
	if err != nil {
		s.t.Fatalf("Get(%s) error: %v", want.Key, err)
	}
	wantRecord(s.t, "Get", got, want)
}

// wantRecord fails the test unless got holds the same fields as want.
func wantRecord(t *testing.T, what string, got, want *idempotency.Record) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s = nil, want %+v", what, want)
	}
	if got.Key != want.Key || got.Status != want.Status || !got.Expiry.Equal(want.Expiry) ||
		!got.LeaseEnd.Equal(want.LeaseEnd) || got.LeaseToken != want.LeaseToken ||
		!bytes.Equal(got.Response, want.Response) || got.ResponseOmitted != want.ResponseOmitted ||
		got.ResponseOmittedReason != want.ResponseOmittedReason ||
		got.PayloadHash != want.PayloadHash || !got.CompletedAt.Equal(want.CompletedAt) || !got.Deadline.Equal(want.Deadline) {
		t.Fatalf("%s =\n\t%+v\nwant\n\t%+v", what, got, want)
	}
}

func (s *suite) wantErr(what string, err, target error) {
	s.t.Helper()
	if !errors.Is(err, target) {
		s.t.Fatalf("%s error = %v, want %v", what, err, target)
	}
}

var suiteCases = []struct {
	name string
	run  func(s *suite)
}{
	{"AcquireNew", func(s *suite) {
		rec := s.inProgress("a", 5*time.Second)
		s.mustAcquire(rec)
		s.wantStored(rec)
	}},
	{"KeepsNoRecordItIsGiven", func(s *suite) {
		// The middleware reuses the record it gave Acquire as the one it
		// gives Complete (the Store contract): a store that kept the
		// pointer would see its stored record change under it.
		rec := s.inProgress("a", 5*time.Second)
		want := *rec
		s.mustAcquire(rec)
		*rec = idempotency.Record{Key: "scribbled", Status: "SCRIBBLED", LeaseToken: "z", Response: []byte("z")}
		s.wantStored(&want)
		done := completed(&want, `{"n":1}`)
		given := *done
		s.complete(&given)
		given.Status, given.Response, given.LeaseToken = "SCRIBBLED", []byte("z"), "z"
		s.wantStored(done)
	}},
	{"AcquireRetriedReturnsOwnRecord", func(s *suite) {
		// A retried request whose first answer was lost finds its own
		// record, with its own token: the caller can tell that it holds
		// the lease.
		a := s.inProgress("a", 5*time.Second)
		s.mustAcquire(a)
		wantRecord(s.t, "Acquire retried", s.acquire(a, s.now.Add(time.Second)), a)
	}},
	{"AcquireLiveCompleteReturnsIt", func(s *suite) {
		a := s.inProgress("a", 5*time.Second)
		s.mustAcquire(a)
		done := completed(a, `{"n":1}`)
		s.complete(done)
		wantRecord(s.t, "Acquire", s.acquire(s.inProgress("b", 5*time.Second), s.now.Add(59*time.Minute)), done)
		s.wantStored(done)
	}},
	{"AcquireLiveInProgressReturnsIt", func(s *suite) {
		a := s.inProgress("a", 5*time.Second)
		s.mustAcquire(a)
		// One millisecond before the lease ends, the record is still live.
		wantRecord(s.t, "Acquire", s.acquire(s.inProgress("b", 10*time.Second), s.now.Add(5*time.Second-time.Millisecond)), a)
		s.wantStored(a)
	}},
	{"AcquireExpiredCompleteTakesOver", func(s *suite) {
		a := s.inProgress("a", 5*time.Second)
		a.Expiry = s.now.Add(10 * time.Second)
		s.mustAcquire(a)
		done := completed(a, `"old"`)
		s.complete(done)
		// Live while now < Expiry; expired from Expiry on.
		b := s.inProgress("b", 20*time.Second)
		wantRecord(s.t, "Acquire before expiry", s.acquire(b, s.now.Add(10*time.Second-time.Millisecond)), done)
		s.mustWrite("Acquire at expiry", b, s.now.Add(10*time.Second))
		s.wantStored(b)
	}},
	{"AcquirePassedLeaseTakesOver", func(s *suite) {
		a := s.inProgress("a", 5*time.Second)
		s.mustAcquire(a)
		b := s.inProgress("b", 10*time.Second)
		s.mustWrite("Acquire at lease end", b, s.now.Add(5*time.Second))
		s.wantStored(b)
	}},
	{"CompleteRightToken", func(s *suite) {
		a := s.inProgress("a", 5*time.Second)
		s.mustAcquire(a)
		done := completed(a, `{"ok":true}`)
		s.complete(done)
		s.wantStored(done)
	}},
	{"CompleteWrongTokenLosesLease", func(s *suite) {
		a := s.inProgress("a", 5*time.Second)
		s.mustAcquire(a)
		other := completed(a, `"stolen"`)
		other.LeaseToken = "b"
		s.wantErr("Complete with another token", s.store.Complete(s.t.Context(), other), idempotency.ErrLeaseLost)
		s.wantStored(a)
	}},
	{"CompleteAgainSameToken", func(s *suite) {
		a := s.inProgress("a", 5*time.Second)
		s.mustAcquire(a)
		done := completed(a, `"once"`)
		s.complete(done)
		s.complete(done)
		s.wantStored(done)
	}},
	{"CompleteAfterTakeoverLosesLease", func(s *suite) {
		a := s.inProgress("a", 5*time.Second)
		s.mustAcquire(a)
		b := s.inProgress("b", 20*time.Second)
		s.mustWrite("takeover", b, s.now.Add(6*time.Second))
		s.wantErr("stale Complete", s.store.Complete(s.t.Context(), completed(a, `"stale"`)), idempotency.ErrLeaseLost)
		s.wantStored(b)
	}},
	{"CompleteMissingLosesLease", func(s *suite) {
		s.wantErr("Complete of a missing record", s.store.Complete(s.t.Context(), completed(s.inProgress("a", time.Second), `1`)), idempotency.ErrLeaseLost)
		_, err := s.store.Get(s.t.Context(), s.key)
		s.wantErr("Get after failed Complete", err, idempotency.ErrRecordNotFound)
	}},
	{"ReleaseRightToken", func(s *suite) {
		s.mustAcquire(s.inProgress("a", 5*time.Second))
		if err := s.store.Release(s.t.Context(), s.key, "a"); err != nil {
			s.t.Fatalf("Release error: %v", err)
		}
		_, err := s.store.Get(s.t.Context(), s.key)
		s.wantErr("Get after Release", err, idempotency.ErrRecordNotFound)
	}},
	{"ReleaseWrongTokenKeepsRecord", func(s *suite) {
		a := s.inProgress("a", 5*time.Second)
		s.mustAcquire(a)
		s.wantErr("Release with another token", s.store.Release(s.t.Context(), s.key, "b"), idempotency.ErrLeaseLost)
		s.wantStored(a)
	}},
	{"ReleaseMissing", func(s *suite) {
		if err := s.store.Release(s.t.Context(), s.key, "a"); err != nil {
			s.t.Fatalf("Release of a missing record error = %v, want nil", err)
		}
	}},
	{"GetMissing", func(s *suite) {
		_, err := s.store.Get(s.t.Context(), s.key)
		s.wantErr("Get", err, idempotency.ErrRecordNotFound)
	}},
	{"GetReturnsCopy", func(s *suite) {
		a := s.inProgress("a", 5*time.Second)
		s.mustAcquire(a)
		done := completed(a, `"abc"`)
		s.complete(done)
		got, err := s.store.Get(s.t.Context(), s.key)
		if err != nil {
			s.t.Fatal(err)
		}
		got.Response[0] = 'X'
		got.Status = "CHANGED"
		s.wantStored(done)
	}},
	{"RoundTripFields", func(s *suite) {
		a := s.inProgress("a", 1500*time.Millisecond)
		a.PayloadHash = "0123456789abcdef"
		a.Deadline = s.now.Add(1250 * time.Millisecond)
		s.mustAcquire(a)
		s.wantStored(a)
		done := completed(a, `{"id":7,"text":"héllo","list":[1,2,3]}`)
		s.complete(done)
		s.wantStored(done)
	}},
	{"RoundTripBinaryResponse", func(s *suite) {
		a := s.inProgress("a", time.Second)
		s.mustAcquire(a)
		done := completed(a, "")
		done.Response = []byte{0xff, 0x00, 0xfe, 'a', 0x80}
		s.complete(done)
		s.wantStored(done)
	}},
	{"RoundTripResponseOmitted", func(s *suite) {
		a := s.inProgress("a", time.Second)
		s.mustAcquire(a)
		done := completed(a, "")
		done.Response = nil
		done.ResponseOmitted = true
		done.ResponseOmittedReason = idempotency.ReasonTooLarge
		s.complete(done)
		s.wantStored(done)
	}},
	{"ConcurrentAcquireOneWinner", concurrentAcquire},
}

// concurrentAcquire runs rounds of goroutines that acquire one key at once:
// each round exactly one of them writes its record, the others see it, and
// the winner releases it for the next round.
func concurrentAcquire(s *suite) {
	const goroutines, rounds = 32, 20
	for round := range rounds {
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []string
			seen    []string
			errs    []error
		)
		for g := range goroutines {
			wg.Go(func() {
				rec := s.inProgress(fmt.Sprintf("r%d-g%d", round, g), time.Minute)
				existing, err := s.store.Acquire(s.t.Context(), rec, s.now)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case existing == nil:
					winners = append(winners, rec.LeaseToken)
				default:
					seen = append(seen, existing.LeaseToken)
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			s.t.Fatalf("round %d: %d Acquire errors, first: %v", round, len(errs), errs[0])
		}
		if len(winners) != 1 {
			s.t.Fatalf("round %d: %d winners %v, want exactly 1", round, len(winners), winners)
		}
		for _, token := range seen {
			if token != winners[0] {
				s.t.Fatalf("round %d: a loser saw token %q, want the winner's %q", round, token, winners[0])
			}
		}
		if err := s.store.Release(s.t.Context(), s.key, winners[0]); err != nil {
			s.t.Fatalf("round %d: Release error: %v", round, err)
		}
	}
}
