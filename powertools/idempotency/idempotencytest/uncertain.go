package idempotencytest

import (
	"context"
	"fmt"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Reclaim replaces the record rec.Key with rec when the stored record is
// UNCERTAIN and carries token, or rec's own token (a retried Reclaim);
// otherwise it returns [idempotency.ErrLeaseLost]. A record over the size limit gives
// [idempotency.ErrRecordTooLarge]. It is counted as an Acquire in
// [Store.Counts]: it takes a key, as Acquire does.
func (s *Store) Reclaim(ctx context.Context, rec *idempotency.Record, token string) error {
	if err := begin(ctx, rec.Key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkSize("reclaim", rec); err != nil {
		return err
	}
	s.counts.Acquire++
	if old, ok := s.records[rec.Key]; !ok || old.Status != idempotency.StatusUncertain || (old.LeaseToken != token && old.LeaseToken != rec.LeaseToken) {
		return fmt.Errorf("idempotencytest: reclaim %q: %w", rec.Key, idempotency.ErrLeaseLost)
	}
	s.put(rec)
	return nil
}
