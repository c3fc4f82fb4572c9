package idempotencytest

import (
	"fmt"

	"github.com/gopowertools/lambda/internal/itemsize"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// DefaultMaxItemSize is the largest record a [Store] keeps unless
// [Store.SetMaxItemSize] changes it: DynamoDB's item limit of 400 KB,
// which DynamoDB defines as 409,600 bytes, attribute names included. See
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items
const DefaultMaxItemSize = itemsize.Max

// SetMaxItemSize sets the largest record that Acquire, Complete and
// Reclaim accept, in bytes: the size of the item the DynamoDB store would
// write for it, as DynamoDB counts it. A larger record gives
// [idempotency.ErrRecordTooLarge] and leaves the store as it was. A limit
// of 0 or less removes the limit. The default is [DefaultMaxItemSize].
func (s *Store) SetMaxItemSize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 {
		// The field's zero value stands for the default, so that the
		// zero Store enforces it.
		n = -1
	}
	s.maxItemSize = n
}

// checkSize returns the error the DynamoDB store returns, without a
// request, when rec is over the limit: the size is the one that store
// counts for the item it writes for rec, with its default attribute
// names. s.mu must be held.
func (s *Store) checkSize(op string, rec *idempotency.Record) error {
	limit := s.maxItemSize
	switch {
	case limit < 0:
		return nil
	case limit == 0:
		limit = DefaultMaxItemSize
	}
	if size := itemsize.Record(rec); size > limit {
		return fmt.Errorf("idempotencytest: %s %q: item of at least %d bytes is over the limit of %d: %w", op, rec.Key, size, limit, idempotency.ErrRecordTooLarge)
	}
	return nil
}
