// Package idempotencytest helps test code that uses the idempotency
// package: [Store] keeps records in memory with the same semantics as the
// DynamoDB store, and [TestStore] checks any [idempotency.Store] against the
// contract.
package idempotencytest

import (
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
	records     table
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

// Acquire writes rec unless a live record holds rec.Key. A stored record
// gives way when its Expiry is set and has passed, or when it is IN_PROGRESS
// and its lease has passed (or it has none): the condition the DynamoDB
// store sends. Otherwise the stored record is returned, or a
// [*idempotency.CorruptedRecordError] when its status is unknown. A record
// over the size limit gives [idempotency.ErrRecordTooLarge].
func (s *Store) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if rec.Key == "" {
		return nil, errEmptyKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkSize("acquire", rec); err != nil {
		return nil, err
	}
	s.counts.Acquire++
	i, old, ok := s.records.lookup(rec.Key)
	if ok && !old.replaceable(now) {
		if err := old.check(rec.Key); err != nil {
			return nil, err
		}
		return old.record(rec.Key), nil
	}
	s.records.putAt(i, ok, rec)
	return nil, nil
}

// Complete replaces the record with rec when the stored one carries
// rec.LeaseToken; otherwise, or when there is none, it returns
// [idempotency.ErrLeaseLost]. A record over the size limit gives
// [idempotency.ErrRecordTooLarge] and leaves the stored one as it was.
func (s *Store) Complete(ctx context.Context, rec *idempotency.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if rec.Key == "" {
		return errEmptyKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkSize("complete", rec); err != nil {
		return err
	}
	s.counts.Complete++
	i, old, ok := s.records.lookup(rec.Key)
	if !ok || string(old.leaseToken()) != rec.LeaseToken {
		return fmt.Errorf("idempotencytest: complete %q: %w", rec.Key, idempotency.ErrLeaseLost)
	}
	s.records.putAt(i, true, rec)
	return nil
}

// Release deletes the record key when it carries token. A missing record is
// not an error; a record with another token gives [idempotency.ErrLeaseLost].
func (s *Store) Release(ctx context.Context, key, token string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if key == "" {
		return errEmptyKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.Release++
	old, ok := s.records.get(key)
	if !ok {
		return nil
	}
	if string(old.leaseToken()) != token {
		return fmt.Errorf("idempotencytest: release %q: %w", key, idempotency.ErrLeaseLost)
	}
	s.records.delete(key)
	return nil
}

// Get returns a copy of the record key, [idempotency.ErrRecordNotFound], or
// a [*idempotency.CorruptedRecordError] when its status is unknown.
func (s *Store) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if key == "" {
		return nil, errEmptyKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.Get++
	old, ok := s.records.get(key)
	if !ok {
		return nil, fmt.Errorf("idempotencytest: get %q: %w", key, idempotency.ErrRecordNotFound)
	}
	if err := old.check(key); err != nil {
		return nil, err
	}
	return old.record(key), nil
}

// Put stores a copy of rec as it is, with no condition and no check: a test
// uses it to seed a record, or to corrupt one (an unknown Status makes
// Acquire and Get return a [*idempotency.CorruptedRecordError], as an
// undecodable DynamoDB item does). Put is not counted in [Store.Counts].
func (s *Store) Put(rec *idempotency.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records.put(rec)
}

// Records returns a copy of every stored record, expired ones included,
// sorted by key.
func (s *Store) Records() []idempotency.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]idempotency.Record, 0, s.records.len())
	s.records.each(func(key string, p packed) {
		out = append(out, *p.record(key))
	})
	slices.SortFunc(out, func(a, b idempotency.Record) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Counts returns how many times each Store method has been called.
func (s *Store) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// errEmptyKey matches DynamoDB, which refuses an empty key attribute.
var errEmptyKey = errors.New("idempotencytest: empty idempotency key")
