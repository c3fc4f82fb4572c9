package idempotencytest

import (
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// The suite's cases for UNCERTAIN records: a store keeps one until it
// expires, whatever its lease, and lets exactly one reclaimer take it
// over.
func init() { suiteCases = append(suiteCases, uncertainCases...) }

// uncertain returns rec marked UNCERTAIN, as the middleware writes it with
// MarkUncertain: no lease, the same token.
func uncertain(rec *idempotency.Record) *idempotency.Record {
	c := *rec
	c.Status = idempotency.StatusUncertain
	c.LeaseEnd = time.Time{}
	return &c
}

var uncertainCases = []struct {
	name string
	run  func(s *suite)
}{
	{"UncertainRoundTrip", func(s *suite) {
		rec := s.inProgress("a", time.Second)
		s.mustAcquire(rec)
		held := uncertain(rec)
		held.PayloadHash = "hash"
		s.markUncertain(held)
		s.wantStored(held)
	}},
	{"UncertainBlocksAcquireUntilExpiry", func(s *suite) {
		rec := s.inProgress("a", time.Second)
		s.mustAcquire(rec)
		held := uncertain(rec)
		s.markUncertain(held)
		// No lease, and long after the first one ended: still held.
		later := s.inProgress("b", time.Second)
		existing := s.acquire(later, s.now.Add(10*time.Minute))
		wantRecord(s.t, "Acquire of an UNCERTAIN key", existing, held)
		// A reconciler's lease that has ended does not free it either.
		leased := *held
		leased.LeaseEnd = s.now.Add(time.Second)
		s.markUncertain(&leased)
		existing = s.acquire(later, s.now.Add(time.Minute))
		wantRecord(s.t, "Acquire of an UNCERTAIN key whose lease ended", existing, &leased)
		// Past its expiry it gives way.
		s.mustWrite("Acquire after the expiry", later, held.Expiry)
	}},
	{"MarkUncertainWrongTokenLosesLease", func(s *suite) {
		a := s.inProgress("a", 5*time.Second)
		s.mustAcquire(a)
		other := uncertain(a)
		other.LeaseToken = "b"
		s.wantErr("MarkUncertain with another token", s.store.MarkUncertain(s.t.Context(), other), idempotency.ErrLeaseLost)
		s.wantStored(a)
	}},
	{"MarkUncertainAgainSameToken", func(s *suite) {
		a := s.inProgress("a", 5*time.Second)
		s.mustAcquire(a)
		held := uncertain(a)
		s.markUncertain(held)
		s.markUncertain(held)
		s.wantStored(held)
	}},
	{"MarkUncertainMissingLosesLease", func(s *suite) {
		s.wantErr("MarkUncertain of a missing record", s.store.MarkUncertain(s.t.Context(), uncertain(s.inProgress("a", time.Second))), idempotency.ErrLeaseLost)
		_, err := s.store.Get(s.t.Context(), s.key)
		s.wantErr("Get after failed MarkUncertain", err, idempotency.ErrRecordNotFound)
	}},
	{"ReclaimTakesUncertainOnce", func(s *suite) {
		u := s.store
		rec := s.inProgress("a", time.Second)
		s.mustAcquire(rec)
		s.markUncertain(uncertain(rec))
		first := s.inProgress("b", 5*time.Second)
		first.Status = idempotency.StatusUncertain
		if err := u.Reclaim(s.t.Context(), first, "a"); err != nil {
			s.t.Fatalf("Reclaim: %v", err)
		}
		s.wantStored(first)
		// The same Reclaim sent again, as a client retries a request
		// whose reply was lost, finds its own record: it succeeds.
		if err := u.Reclaim(s.t.Context(), first, "a"); err != nil {
			s.t.Fatalf("Reclaim retried: %v, want success: the record is its own", err)
		}
		s.wantStored(first)
		second := s.inProgress("c", 5*time.Second)
		second.Status = idempotency.StatusUncertain
		s.wantErr("second Reclaim with the old token", u.Reclaim(s.t.Context(), second, "a"), idempotency.ErrLeaseLost)
		s.wantStored(first)
		// The reclaimer completes under its own token.
		s.complete(completed(first, `"done"`))
	}},
	{"ReclaimRefusesOtherStates", func(s *suite) {
		u := s.store
		rec := s.inProgress("a", time.Second)
		next := s.inProgress("b", time.Second)
		next.Status = idempotency.StatusUncertain
		s.wantErr("Reclaim of a missing record", u.Reclaim(s.t.Context(), next, "a"), idempotency.ErrLeaseLost)
		s.mustAcquire(rec)
		s.wantErr("Reclaim of an INPROGRESS record", u.Reclaim(s.t.Context(), next, "a"), idempotency.ErrLeaseLost)
		done := completed(rec, `"ok"`)
		s.complete(done)
		s.wantErr("Reclaim of a COMPLETED record", u.Reclaim(s.t.Context(), next, "a"), idempotency.ErrLeaseLost)
		s.wantStored(done)
	}},
}
