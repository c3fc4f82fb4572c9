package idempotency

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gopowertools/lambda/internal/keyformat"
)

// This file holds the package's errors; docs/errors.md tables them.
//
// Each failure the middleware returns is one type with the failure's
// details as fields, matched with errors.As or errors.AsType:
//
//	if e, ok := errors.AsType[*idempotency.InProgressError](err); ok {
//		// retry after e.LeaseEnd
//	}
//
// The three sentinels below are the conditions a [Store] reports to the
// middleware, which it branches on; a caller never gets them bare.

// Conditions a [Store] reports, wrapped with its own message (fmt.Errorf's
// %w). Users meet them only when they write or test a Store.
var (
	// ErrLeaseLost means the record is held under another lease token.
	ErrLeaseLost = errors.New("idempotency: lease lost: the record belongs to another invocation")
	// ErrUnstorableResponse means that Complete stored nothing because
	// the store cannot keep the record's response: too large, not in a
	// form the store keeps, or refused by a wrapper (responsestore
	// could not encrypt it). The middleware then completes the record
	// without it, so that the handler does not run again, and duplicates
	// get a [*ResponseNotStoredError]. An error that matches it and has a
	// method NotStoredReason() string gives the reason the record keeps
	// ([Record.ResponseOmittedReason]), such as responsestore's "could not
	// be encrypted"; without one, the reason is [ReasonTooLarge] for
	// [ErrRecordTooLarge], and "refused by the store" otherwise.
	ErrUnstorableResponse = errors.New("idempotency: the store cannot keep this response")
	// ErrRecordTooLarge means the record exceeds what the store accepts.
	// It matches [ErrUnstorableResponse]: a COMPLETED record too large to
	// store is completed again without its response.
	ErrRecordTooLarge error = &tooLargeError{}
	// ErrRecordNotFound means there is no record for the key.
	ErrRecordNotFound = errors.New("idempotency: record not found")
)

// tooLargeError is ErrRecordTooLarge: a record too large is one whose
// response the store cannot keep.
type tooLargeError struct{}

func (*tooLargeError) Error() string { return "idempotency: record too large to store" }
func (*tooLargeError) Unwrap() error { return ErrUnstorableResponse }

// InProgressError is returned to a duplicate while another invocation holds
// a live lease on the key. Retry after LeaseEnd.
type InProgressError struct {
	Key      string
	LeaseEnd time.Time
}

func (e *InProgressError) Error() string {
	return fmt.Sprintf("idempotency: key %q is in progress until %s", e.Key, e.LeaseEnd.UTC().Format(time.RFC3339Nano))
}

// PayloadConflictError is returned when payload validation is on and the
// event's payload hash differs from the stored one. The handler is not run.
type PayloadConflictError struct {
	Key        string
	StoredHash string
	EventHash  string
}

func (e *PayloadConflictError) Error() string {
	return fmt.Sprintf("idempotency: payload for key %q differs from the stored one (stored hash %s, event hash %s)", e.Key, e.StoredHash, e.EventHash)
}

// MissingKeyError is returned when the key expression selects nothing and a
// key is required.
type MissingKeyError struct {
	Expression string
}

func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("idempotency: no idempotency key in the event at %q", e.Expression)
}

// InvalidEventError is returned, before any store call and without running
// the handler, when the event cannot be read with one meaning: it is not
// JSON, an expression fails on it (as opposed to selecting nothing), an
// object on the way to a selected value, or inside one, holds two member
// names that encoding/json would fill one struct field or one map key
// from, the handler's type reads it otherwise than a Powertools mode
// would key it, or a wrapped function's argument cannot be encoded as
// JSON faithfully. See docs/security.md. Retrying the same event cannot
// succeed.
type InvalidEventError struct {
	// Expression is the key or payload-validation expression that was
	// being evaluated ("@" for the whole event), or "" when a wrapped
	// function's argument cannot be encoded.
	Expression string
	Err        error
}

func (e *InvalidEventError) Error() string {
	if e.Expression == "" {
		return fmt.Sprintf("idempotency: invalid event: %v", e.Err)
	}
	return fmt.Sprintf("idempotency: invalid event for %q: %v", e.Expression, e.Err)
}

func (e *InvalidEventError) Unwrap() error { return e.Err }

// InexactNumberError is the Err of an [*InvalidEventError] in a Powertools
// compatibility mode ([WithCompatibility]) when a number inside the key
// or the validated value is one that the Powertools runtime reads as a
// double that other numbers read as too: 100.00000000000000001 (100.0),
// 1e400 (infinite), or in [PowertoolsTypeScript] an integer past 2^53
// such as 9007199254740993. Powertools would give two requests that a Go
// handler reading numbers exactly tells apart one key, replaying one's
// response to the other, or one payload hash, letting a changed amount
// pass validation; the middleware refuses the event instead, before any
// store call. docs/comparison.md states which numbers are accepted.
//
// It exists apart from the other invalid events so that a caller can tell
// its client which number to send otherwise (with fewer digits, or as a
// string) and see that only a compatibility mode refuses it: the own
// format keys every number as written.
type InexactNumberError struct {
	Compatibility Compatibility
	// Path is where the number is in the value the expression selected,
	// in JMESPath syntax: "@" for the value itself, items[2].price, or
	// "odd name".x for a name that needs quoting.
	Path string
	// Number is the number as the event writes it.
	Number string
}

func (e *InexactNumberError) Error() string {
	return fmt.Sprintf("in %v compatibility mode, the number %s at %s is refused: Powertools hashes it as %s, the text of other numbers too, so requests that differ in it would share a hash", e.Compatibility, e.Number, e.Path, keyformat.NumberText(keyformat.Mode(e.Compatibility), e.Number))
}

// UndecodableEventError is returned, without running the handler, when
// an event that the middleware could read (its key, its payload hash) does
// not decode into the handler's input type: a string where the type has a
// number, say. The key is released, so the same event fails the same way
// on every delivery; a duplicate of a request whose record is COMPLETED
// still gets the stored response, which needs no decoding. Type is the
// input type, as %v writes it; Err is encoding/json's error
// (*json.UnmarshalTypeError, *json.SyntaxError, an unknown field with
// [WithDisallowUnknownFields]). Retrying the same event cannot succeed.
type UndecodableEventError struct {
	Type string
	Err  error
}

func (e *UndecodableEventError) Error() string {
	return fmt.Sprintf("idempotency: the event does not decode into %s: %v", e.Type, e.Err)
}

func (e *UndecodableEventError) Unwrap() error { return e.Err }

// PersistenceError is returned when the store failed: before the handler
// ran (which it then does not), or while committing a handler's staged
// writes (see [CommitError]). Op is the store operation: "acquire",
// "reclaim" or "complete". It unwraps to the store's error.
type PersistenceError struct {
	Op  string
	Key string
	Err error
}

func (e *PersistenceError) Error() string {
	// The stores' own errors name the key already: once is enough.
	if cause := e.Err.Error(); e.Key != "" && (strings.Contains(cause, e.Key) || strings.Contains(cause, strconv.Quote(e.Key))) {
		return fmt.Sprintf("idempotency: %s record: %s", e.Op, cause)
	}
	return fmt.Sprintf("idempotency: %s record %q: %v", e.Op, e.Key, e.Err)
}

func (e *PersistenceError) Unwrap() error { return e.Err }

// CorruptedRecordError is returned when a stored record cannot be read
// (unknown status, undecodable data), or when a replay that decodes the
// stored response (a function wrapper's, or a [Handler]'s with
// [WithReplayHook]) finds that it does not decode into Out; a Handler
// without a hook replays the bytes as stored. The middleware fails closed:
// the handler is not run on a key whose record it cannot read. A [Store]
// returns one, as it is, for a record it cannot decode.
type CorruptedRecordError struct {
	Key    string
	Reason string
}

func (e *CorruptedRecordError) Error() string {
	return fmt.Sprintf("idempotency: record %q is corrupted: %s", e.Key, e.Reason)
}

// ResponseNotStoredError is returned to a duplicate of an invocation that
// succeeded but whose response was not stored. The handler is not run
// again.
type ResponseNotStoredError struct {
	Key string
	// Reason is why the response was not stored, as the record keeps it
	// ([Record.ResponseOmittedReason]); "" when the record does not say.
	Reason string
}

// Reasons a response is not stored, that the middleware gives; a store
// may give its own ([ErrUnstorableResponse]).
const (
	// ReasonTooLarge: the record with the response was over the store's
	// limit (DynamoDB's 400 KB item).
	ReasonTooLarge = "too large for the store"
	// ReasonNotEncoded: the handler's result could not be encoded as JSON.
	ReasonNotEncoded = "could not be encoded"
)

func (e *ResponseNotStoredError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("idempotency: key %q completed, but its response was not stored", e.Key)
	}
	return fmt.Sprintf("idempotency: key %q completed, but its response was not stored: %s", e.Key, e.Reason)
}

// ConfigError is returned, or panicked by [Wrap], when an option or an
// environment variable is invalid. Name is the option or variable.
type ConfigError struct {
	Name string
	Err  error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("idempotency: invalid %s: %v", e.Name, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// AbandonedError is returned, under [AbandonBlock], to a duplicate of a
// key whose invocation ended at Deadline without completing or releasing
// it: its effect may have happened, so the key stays locked until Expiry,
// or until an operator deletes the record. The handler is not run.
type AbandonedError struct {
	Key      string
	Deadline time.Time
	Expiry   time.Time
}

func (e *AbandonedError) Error() string {
	return fmt.Sprintf("idempotency: the invocation holding key %q ended at %s without completing; the key is locked until %s",
		e.Key, e.Deadline.UTC().Format(time.RFC3339Nano), e.Expiry.UTC().Format(time.RFC3339Nano))
}

// UncertainError says that an effect may or may not have happened, such as
// a charge whose request timed out after the provider received it.
//
// A handler returns one, made with [Uncertain], to keep its key: the record
// becomes UNCERTAIN instead of being released, and the handler is not run
// again for that key until the outcome is known. The handler's caller gets
// the handler's error unchanged.
//
// A duplicate of an UNCERTAIN key gets an UncertainError with Key set. With
// [WithReconcile], the duplicate first asks the reconcile function, and gets
// an UncertainError only when it cannot tell (Err is then its error) or
// another invocation is reconciling the key (until LeaseEnd).
type UncertainError struct {
	// Key is the idempotency key; "" on the error a handler returns.
	Key string
	// LeaseEnd is when the invocation reconciling the key gives it up, or
	// zero.
	LeaseEnd time.Time
	// Err is the cause: the handler's error, or the reconcile function's.
	Err error
}

// Uncertain marks err as an uncertain outcome (see [UncertainError]). A nil
// err stays nil.
func Uncertain(err error) error {
	if err == nil {
		return nil
	}
	return &UncertainError{Err: err}
}

func (e *UncertainError) Error() string {
	msg := "idempotency: uncertain outcome"
	if e.Key != "" {
		msg = fmt.Sprintf("idempotency: the outcome for key %q is uncertain and must be reconciled", e.Key)
	}
	if !e.LeaseEnd.IsZero() {
		msg += fmt.Sprintf(" (being reconciled until %s)", e.LeaseEnd.UTC().Format(time.RFC3339Nano))
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *UncertainError) Unwrap() error { return e.Err }

// CommitError is what the Complete of a Store that commits an invocation's
// staged writes with its COMPLETED record (an [Invoker]) returns when they
// were not committed, or when it cannot tell whether they were. The
// middleware acts on State, and Err is why.
type CommitError struct {
	Key   string
	State CommitState
	Err   error
}

// CommitState is what became of an invocation's staged writes and its
// COMPLETED record when they could not be committed.
type CommitState int

const (
	// CommitRefused: the staged writes were refused (a condition of the
	// handler's failed, a limit was passed) and nothing was committed.
	// The middleware releases the key and returns Err to the caller as
	// the handler's own error: the handler failed.
	CommitRefused CommitState = iota + 1
	// CommitLeaseLost: another invocation holds the key, so nothing was
	// committed. The middleware leaves that invocation's record alone and
	// returns a [*PersistenceError].
	CommitLeaseLost
	// CommitUnknown: the request failed and the record could not be read
	// back. The record tells later: COMPLETED if the writes were
	// committed, INPROGRESS until its lease ends if not. The middleware
	// keeps it and returns a [*PersistenceError].
	CommitUnknown
)

func (s CommitState) String() string {
	switch s {
	case CommitRefused:
		return "refused"
	case CommitLeaseLost:
		return "lease lost"
	case CommitUnknown:
		return "unknown"
	}
	return fmt.Sprintf("CommitState(%d)", int(s))
}

func (e *CommitError) Error() string {
	var what string
	switch e.State {
	case CommitRefused:
		what = "the staged writes were refused; nothing was committed"
	case CommitLeaseLost:
		what = "the lease was lost; nothing was committed"
	case CommitUnknown:
		what = "unknown whether the staged writes and the record were committed"
	default:
		what = e.State.String()
	}
	return fmt.Sprintf("idempotency: complete %q: %s: %v", e.Key, what, e.Err)
}

func (e *CommitError) Unwrap() error { return e.Err }
