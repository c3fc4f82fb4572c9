package idempotencytest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

func TestMemoryStore(t *testing.T) {
	t.Parallel()
	idempotencytest.TestStore(t, func(*testing.T) idempotency.Store { return idempotencytest.NewStore() })
}

func TestMemoryStoreSharedAcrossSubtests(t *testing.T) {
	t.Parallel()
	s := idempotencytest.NewStore()
	idempotencytest.TestStore(t, func(*testing.T) idempotency.Store { return s })
}

func TestZeroValueStore(t *testing.T) {
	t.Parallel()
	var s idempotencytest.Store
	idempotencytest.TestStore(t, func(*testing.T) idempotency.Store { return &s })
}

// The memory store keeps DynamoDB's precision, so that a test that passes
// on it passes on DynamoDB.
func TestStorePrecision(t *testing.T) {
	t.Parallel()
	s := idempotencytest.NewStore()
	now := time.Date(2026, 1, 2, 3, 4, 5, 987654321, time.UTC)
	rec := &idempotency.Record{
		Key: "k", Status: idempotency.StatusInProgress, LeaseToken: "a",
		Expiry:   now.Add(time.Hour),
		LeaseEnd: now.Add(time.Second),
	}
	if _, err := s.Acquire(t.Context(), rec, now); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 1, 2, 4, 4, 5, 0, time.UTC); !got.Expiry.Equal(want) {
		t.Errorf("Expiry = %v, want %v (whole seconds)", got.Expiry, want)
	}
	if want := time.Date(2026, 1, 2, 3, 4, 6, 987000000, time.UTC); !got.LeaseEnd.Equal(want) {
		t.Errorf("LeaseEnd = %v, want %v (whole milliseconds)", got.LeaseEnd, want)
	}
	// The lease, truncated, ends at ...6.987: a caller at ...6.9875 finds it over.
	existing, err := s.Acquire(t.Context(), &idempotency.Record{Key: "k", Status: idempotency.StatusInProgress, LeaseToken: "b", Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute)}, got.LeaseEnd.Add(500*time.Microsecond))
	if err != nil || existing != nil {
		t.Fatalf("Acquire after the truncated lease end = %+v, %v; want it taken over", existing, err)
	}
}

func TestCorruptedRecord(t *testing.T) {
	t.Parallel()
	now := time.Now()
	tests := []struct {
		name    string
		stored  idempotency.Record
		corrupt bool
	}{
		{"UnknownStatusLive", idempotency.Record{Status: "BOGUS", Expiry: now.Add(time.Hour)}, true},
		{"EmptyStatusLive", idempotency.Record{Expiry: now.Add(time.Hour)}, true},
		// The Acquire condition looks at the expiry first, as DynamoDB's
		// does: an expired record is replaced whatever it holds.
		{"UnknownStatusExpired", idempotency.Record{Status: "BOGUS", Expiry: now.Add(-time.Second)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := idempotencytest.NewStore()
			tt.stored.Key = "k"
			s.Put(&tt.stored)
			existing, err := s.Acquire(t.Context(), &idempotency.Record{Key: "k", Status: idempotency.StatusInProgress, LeaseToken: "a", Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Second)}, now)
			var ce *idempotency.CorruptedRecordError
			if tt.corrupt {
				if !errors.As(err, &ce) || ce.Key != "k" || !errors.As(err, new(*idempotency.CorruptedRecordError)) {
					t.Fatalf("Acquire = %+v, %v; want a *CorruptedRecordError for key k", existing, err)
				}
				if _, err := s.Get(t.Context(), "k"); !errors.As(err, &ce) {
					t.Fatalf("Get error = %v, want a *CorruptedRecordError", err)
				}
				return
			}
			if err != nil || existing != nil {
				t.Fatalf("Acquire = %+v, %v; want the record taken over", existing, err)
			}
		})
	}
}

func TestCountsAndRecords(t *testing.T) {
	t.Parallel()
	s := idempotencytest.NewStore()
	now := time.Now()
	for _, key := range []string{"b", "a"} {
		if _, err := s.Acquire(t.Context(), &idempotency.Record{Key: key, Status: idempotency.StatusInProgress, LeaseToken: "t", Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Second)}, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Release(t.Context(), "a", "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), "a"); !errors.Is(err, idempotency.ErrRecordNotFound) {
		t.Fatal(err)
	}
	s.Put(&idempotency.Record{Key: "c", Status: idempotency.StatusComplete})
	if got, want := s.Counts(), (idempotencytest.Counts{Acquire: 2, Release: 1, Get: 1}); got != want {
		t.Errorf("Counts() = %+v, want %+v", got, want)
	}
	recs := s.Records()
	if len(recs) != 2 || recs[0].Key != "b" || recs[1].Key != "c" {
		t.Fatalf("Records() = %+v, want b and c in order", recs)
	}
	recs[0].Key = "changed"
	if s.Records()[0].Key != "b" {
		t.Error("Records() shares the stored records")
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	s := idempotencytest.NewStore()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Get(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("Get error = %v, want context.Canceled", err)
	}
}
