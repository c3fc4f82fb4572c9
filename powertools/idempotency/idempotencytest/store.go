// Package idempotencytest helps test code that uses the idempotency
// package: [Store] keeps records in memory with the same semantics as the
// DynamoDB store, and [TestStore] checks any [idempotency.Store] against the
// contract.
package idempotencytest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Store is an [idempotency.Store] that keeps records in memory. It applies
// the rules of github.com/gopowertools/lambda/dynamo.Store, condition for
// condition, and stores times with DynamoDB's precision (Expiry in whole
// seconds, LeaseEnd in whole milliseconds), so a test behaves the same on
// both.
//
// Expired records are not deleted (DynamoDB's TTL deletes them late, too):
// Get still returns them until a new Acquire takes the key.
//
// A record too large for a DynamoDB item (over [DefaultMaxItemSize] bytes,
// unless [Store.SetMaxItemSize] changes the limit) is refused with
// [idempotency.ErrRecordTooLarge], as the DynamoDB store refuses it: the
// middleware then completes the record without its response, and a
// duplicate gets a [*idempotency.ResponseNotStoredError].
//
// The zero value is an empty store ready to use, with that limit. A Store
// is safe for concurrent use.
type Store struct {
	mu          sync.Mutex
	records     map[string]idempotency.Record // as DynamoDB keeps them (see stored)
	counts      Counts
	maxItemSize int // 0: DefaultMaxItemSize; negative: no limit
}

// Counts is how many times each method of a [Store] was called, whatever
// its outcome, but for the calls the DynamoDB store refuses without a
// request: a done context, an empty key, a record too large. A test can
// use it to check that a path makes no request to the store, as a local
// cache hit should.
type Counts struct {
	Acquire, Complete, Release, Get int
}

// NewStore returns an empty Store.
func NewStore() *Store { return &Store{} }

var _ idempotency.Store = (*Store)(nil)

// Acquire writes rec unless a live record holds rec.Key
// ([idempotency.Record.Live] at now): the condition the DynamoDB store
// sends. Otherwise the stored record is returned, or a
// [*idempotency.CorruptedRecordError] when its status is unknown. A record
// over the size limit gives [idempotency.ErrRecordTooLarge].
func (s *Store) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	if err := begin(ctx, rec.Key); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkSize("acquire", rec); err != nil {
		return nil, err
	}
	s.counts.Acquire++
	if old, ok := s.records[rec.Key]; ok && old.Live(now) {
		return readBack(&old)
	}
	s.put(rec)
	return nil, nil
}

// Complete replaces the record with rec, a COMPLETED record, when the
// stored one carries rec.LeaseToken; otherwise, or when there is none, it
// returns [idempotency.ErrLeaseLost]. A record over the size limit gives
// [idempotency.ErrRecordTooLarge] and leaves the stored one as it was.
func (s *Store) Complete(ctx context.Context, rec *idempotency.Record) error {
	return s.replace(ctx, "complete", rec)
}

// MarkUncertain replaces the record with rec, an UNCERTAIN record, as
// Complete does. It is counted as a Complete in [Store.Counts]: it
// writes the record an invocation leaves, as Complete does.
func (s *Store) MarkUncertain(ctx context.Context, rec *idempotency.Record) error {
	return s.replace(ctx, "mark uncertain", rec)
}

// replace writes rec when the stored record carries its lease token.
func (s *Store) replace(ctx context.Context, op string, rec *idempotency.Record) error {
	if err := begin(ctx, rec.Key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkSize(op, rec); err != nil {
		return err
	}
	s.counts.Complete++
	if old, ok := s.records[rec.Key]; !ok || old.LeaseToken != rec.LeaseToken {
		return fmt.Errorf("idempotencytest: %s %q: %w", op, rec.Key, idempotency.ErrLeaseLost)
	}
	s.put(rec)
	return nil
}

// Release deletes the record key when it carries token. A missing record is
// not an error; a record with another token gives [idempotency.ErrLeaseLost].
func (s *Store) Release(ctx context.Context, key, token string) error {
	if err := begin(ctx, key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.Release++
	old, ok := s.records[key]
	if !ok {
		return nil
	}
	if old.LeaseToken != token {
		return fmt.Errorf("idempotencytest: release %q: %w", key, idempotency.ErrLeaseLost)
	}
	delete(s.records, key)
	return nil
}

// Get returns a copy of the record key, [idempotency.ErrRecordNotFound], or
// a [*idempotency.CorruptedRecordError] when its status is unknown.
func (s *Store) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	if err := begin(ctx, key); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.Get++
	old, ok := s.records[key]
	if !ok {
		return nil, fmt.Errorf("idempotencytest: get %q: %w", key, idempotency.ErrRecordNotFound)
	}
	return readBack(&old)
}

// Put stores a copy of rec as it is, with no condition and no check: a test
// uses it to seed a record, or to corrupt one (an unknown Status makes
// Acquire and Get return a [*idempotency.CorruptedRecordError], as an
// undecodable DynamoDB item does). Put is not counted in [Store.Counts].
func (s *Store) Put(rec *idempotency.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(rec)
}

// Records returns a copy of every stored record, expired ones included,
// sorted by key.
func (s *Store) Records() []idempotency.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]idempotency.Record, 0, len(s.records))
	for _, r := range s.records {
		r.Response = bytes.Clone(r.Response)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b idempotency.Record) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Counts returns how many times each Store method has been called.
func (s *Store) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// put keeps a copy of rec as DynamoDB keeps an item: Expiry in whole
// seconds, LeaseEnd in whole milliseconds, no empty Response (DynamoDB
// keeps no empty data attribute), and nothing shared with the caller.
func (s *Store) put(rec *idempotency.Record) {
	r := *rec
	if !r.Expiry.IsZero() {
		r.Expiry = time.Unix(r.Expiry.Unix(), 0).UTC()
	}
	if !r.LeaseEnd.IsZero() {
		r.LeaseEnd = time.UnixMilli(r.LeaseEnd.UnixMilli()).UTC()
	}
	r.Response = nil
	if len(rec.Response) > 0 {
		r.Response = bytes.Clone(rec.Response)
	}
	if s.records == nil {
		s.records = map[string]idempotency.Record{}
	}
	s.records[r.Key] = r
}

// readBack returns a copy of a stored record, as the DynamoDB store
// decodes an item: a record of unknown status is a
// [*idempotency.CorruptedRecordError].
func readBack(r *idempotency.Record) (*idempotency.Record, error) {
	switch r.Status {
	case idempotency.StatusInProgress, idempotency.StatusComplete, idempotency.StatusUncertain:
	default:
		return nil, &idempotency.CorruptedRecordError{Key: r.Key, Reason: fmt.Sprintf("unknown status %q", r.Status)}
	}
	cp := *r
	cp.Response = bytes.Clone(r.Response)
	return &cp, nil
}

// begin refuses what the DynamoDB store refuses before any request: a
// done context and an empty key (DynamoDB refuses an empty key attribute).
func begin(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if key == "" {
		return errEmptyKey
	}
	return nil
}

// errEmptyKey matches DynamoDB, which refuses an empty key attribute.
var errEmptyKey = errors.New("idempotencytest: empty idempotency key")
