package idempotency

import "time"

// Status is the state of an idempotency record. The values are the strings
// Powertools for AWS Lambda writes, so a table can be shared with functions
// written in other languages.
type Status string

const (
	// StatusInProgress marks a record whose handler is running under a lease.
	StatusInProgress Status = "INPROGRESS"
	// StatusComplete marks a record that holds the handler's response.
	StatusComplete Status = "COMPLETED"
	// StatusUncertain marks a record whose handler returned an error made
	// with [Uncertain]: its effect may or may not have happened, so the
	// handler is not run again until the outcome is reconciled (see
	// [WithReconcile]). Its LeaseEnd, when set, is the lease of an
	// invocation reconciling it.
	StatusUncertain Status = "UNCERTAIN"
)

// Record is one idempotency record, as a [Store] keeps it.
type Record struct {
	// Key is the idempotency key: "prefix#hash".
	Key string
	// Status is the record's state.
	Status Status
	// Expiry is when the record stops counting: after it, the key may be
	// taken again, and DynamoDB's TTL may delete the item. Stored with
	// second precision.
	Expiry time.Time
	// LeaseEnd is when the lease of an INPROGRESS record ends: after it,
	// another invocation may take the record over. Stored with millisecond
	// precision.
	LeaseEnd time.Time
	// Deadline is the deadline of the invocation holding an INPROGRESS
	// record whose lease outlasts it (see [WithAbandonPolicy]): past it,
	// and [AbandonGrace], the invocation is gone. Stored with millisecond
	// precision; zero otherwise.
	Deadline time.Time
	// LeaseToken is a value unique to the invocation (32 hex digits) written
	// with the INPROGRESS record.
	// Completing and releasing the record are conditioned on it, so an
	// invocation that lost its lease cannot touch the new owner's record.
	LeaseToken string
	// Response is the handler's encoded response (COMPLETED only).
	Response []byte
	// ResponseOmitted reports that the handler succeeded but its response
	// was not stored (too large, or refused by the store for another
	// reason): duplicates get a [*ResponseNotStoredError].
	ResponseOmitted bool
	// ResponseOmittedReason says why the response was not stored, in a
	// few words that a duplicate's [ResponseNotStoredError.Reason]
	// repeats: [ReasonTooLarge], [ReasonNotEncoded], or what the store
	// said ([ErrUnstorableResponse]). "" with ResponseOmitted false, and on
	// records of stores or writers that do not keep it.
	ResponseOmittedReason string
	// PayloadHash is the hash of the validated part of the event, when
	// payload validation is on.
	PayloadHash string
	// CompletedAt is when the record became COMPLETED: how old a replayed
	// response is. Stored with millisecond precision; zero on other
	// records, and on records of writers that do not store it.
	CompletedAt time.Time
}

// Live reports whether r still holds its key at now: a COMPLETED or
// UNCERTAIN record until its expiry, an INPROGRESS record until its lease
// or its expiry ends, whichever comes first. A zero Expiry never ends; an
// INPROGRESS record with a zero LeaseEnd is not live. A Store's Acquire
// writes over exactly the records that are not live at the now it is
// given, comparing the times as it stores them (DynamoDB's: Expiry in
// whole seconds, LeaseEnd in whole milliseconds, for which these
// comparisons give the same answer on the truncated now).
func (r *Record) Live(now time.Time) bool {
	if !now.Before(r.Expiry) && !r.Expiry.IsZero() {
		return false
	}
	if r.Status == StatusInProgress {
		return now.Before(r.LeaseEnd)
	}
	return true
}
