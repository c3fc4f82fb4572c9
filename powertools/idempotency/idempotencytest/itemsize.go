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
	if size := itemSize(rec); size > limit {
		return fmt.Errorf("idempotencytest: %s %q: item of at least %d bytes is over the limit of %d: %w", op, rec.Key, size, limit, idempotency.ErrRecordTooLarge)
	}
	return nil
}

// itemSize is the size of the item that the DynamoDB store writes for rec
// with its default attribute names and one key attribute: each
// attribute's name and value, leaving out the zero times, empty strings
// and false flags that the store leaves out.
func itemSize(rec *idempotency.Record) int {
	size := len("id") + len(rec.Key) + len("status") + len(rec.Status)
	if !rec.Expiry.IsZero() {
		size += len("expiration") + itemsize.Int(rec.Expiry.Unix())
	}
	if !rec.LeaseEnd.IsZero() {
		size += len("in_progress_expiration") + itemsize.Int(rec.LeaseEnd.UnixMilli())
	}
	if rec.LeaseToken != "" {
		size += len("lease_token") + len(rec.LeaseToken)
	}
	if rec.PayloadHash != "" {
		size += len("validation") + len(rec.PayloadHash)
	}
	if len(rec.Response) > 0 {
		size += len("data") + len(rec.Response) // S or B: bytes either way
	}
	if rec.ResponseOmitted {
		size += len("response_omitted") + itemsize.Scalar
	}
	if rec.ResponseOmittedReason != "" {
		size += len("response_omitted_reason") + len(rec.ResponseOmittedReason)
	}
	if !rec.CompletedAt.IsZero() {
		size += len("completed_at") + itemsize.Int(rec.CompletedAt.UnixMilli())
	}
	if !rec.Deadline.IsZero() {
		size += len("invocation_deadline") + itemsize.Int(rec.Deadline.UnixMilli())
	}
	return size
}
