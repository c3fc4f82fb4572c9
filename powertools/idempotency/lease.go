package idempotency

import "time"

// lease is what one invocation holds while it owns a key: its record and
// the handler's context, which carries the key. They live and die
// together, so they share one allocation instead of taking two on every
// first call.
//
// The record is IN_PROGRESS as Acquire (or Reclaim) wrote it, then becomes
// in place the COMPLETE (or UNCERTAIN) record given to Complete: a Store
// keeps no *Record it is given (see [Store]), so one record serves both
// writes.
type lease struct {
	rec      Record
	leaseEnd time.Time  // rec's lease end, which the final record does not carry
	ctx      keyContext // the handler's context, with a copy of rec.Key
}
