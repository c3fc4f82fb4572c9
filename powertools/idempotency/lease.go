package idempotency

// lease is what one invocation holds while it owns a key: the record it
// wrote, the record it ends the lease with (COMPLETE, or UNCERTAIN), and the
// handler's context, which carries the key. They live and die together, so
// they share one allocation instead of taking three on every first call.
//
// Each Record is written once and then only read: done is a record of its
// own, not held changed in place, so a Store that kept the pointer Acquire
// was given (the contract does not forbid it) still sees an IN_PROGRESS
// record until it is asked to complete it.
type lease struct {
	held Record     // written by Acquire, or by Reclaim
	done Record     // given to Complete
	ctx  keyContext // the handler's context; its key points to held.Key
}
