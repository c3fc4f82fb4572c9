package idempotency

import (
	"errors"
	"fmt"
	"time"
)

// Errors a [Store] returns. The middleware maps them; users meet them only
// when they write or test a Store.
var (
	// ErrLeaseLost means the record is held under another lease token.
	ErrLeaseLost = errors.New("idempotency: lease lost: the record belongs to another invocation")
	// ErrRecordTooLarge means the record exceeds what the store accepts.
	ErrRecordTooLarge = errors.New("idempotency: record too large to store")
	// ErrRecordNotFound means there is no record for the key.
	ErrRecordNotFound = errors.New("idempotency: record not found")
)

// Sentinels for the errors the middleware returns to callers. Each is
// matched with errors.Is by the typed error that carries its details.
var (
	ErrInProgress        = errors.New("idempotency: another invocation with the same key is in progress")
	ErrPayloadConflict   = errors.New("idempotency: the payload differs from the one stored for this key")
	ErrMissingKey        = errors.New("idempotency: the idempotency key is missing from the event")
	ErrInvalidEvent      = errors.New("idempotency: the event cannot be read with one meaning")
	ErrPersistence       = errors.New("idempotency: the store failed")
	ErrCorruptedRecord   = errors.New("idempotency: the stored record cannot be read")
	ErrResponseNotStored = errors.New("idempotency: the handler succeeded but its response was too large to store")
	ErrConfig            = errors.New("idempotency: invalid configuration")
)

// InProgressError is returned to a duplicate while another invocation holds
// a live lease on the key. Retry after LeaseEnd.
type InProgressError struct {
	Key      string
	LeaseEnd time.Time
}

func (e *InProgressError) Error() string {
	return fmt.Sprintf("idempotency: key %q is in progress until %s", e.Key, e.LeaseEnd.UTC().Format(time.RFC3339Nano))
}

func (e *InProgressError) Is(target error) bool { return target == ErrInProgress }

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

func (e *PayloadConflictError) Is(target error) bool { return target == ErrPayloadConflict }

// MissingKeyError is returned when the key expression selects nothing and a
// key is required.
type MissingKeyError struct {
	Expression string
}

func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("idempotency: no idempotency key in the event at %q", e.Expression)
}

func (e *MissingKeyError) Is(target error) bool { return target == ErrMissingKey }

// InvalidEventError is returned, before any store call and without running
// the handler, when the event cannot be read with one meaning: it is not
// JSON, an expression fails on it (as opposed to selecting nothing), an
// object on the way to a selected value, or inside one, holds two member
// names that encoding/json would fill one struct field from, or a wrapped
// function's argument holds text that JSON cannot encode faithfully. See
// docs/security.md. Retrying the same event cannot succeed.
type InvalidEventError struct {
	// Expression is the key or payload-validation expression that was
	// being evaluated ("@" for the whole event), or "" when a wrapped
	// function's argument cannot be encoded faithfully.
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

func (e *InvalidEventError) Is(target error) bool { return target == ErrInvalidEvent }

// PersistenceError wraps a store failure with the operation that failed.
type PersistenceError struct {
	Op  string // "acquire", "complete", "release" or "get"
	Key string
	Err error
}

func (e *PersistenceError) Error() string {
	return fmt.Sprintf("idempotency: %s record %q: %v", e.Op, e.Key, e.Err)
}

func (e *PersistenceError) Unwrap() error { return e.Err }

func (e *PersistenceError) Is(target error) bool { return target == ErrPersistence }

// CorruptedRecordError is returned when a stored record cannot be read
// (unknown status, undecodable data). The middleware fails closed: the
// handler is not run on a key whose record it cannot read.
type CorruptedRecordError struct {
	Key    string
	Reason string
}

func (e *CorruptedRecordError) Error() string {
	return fmt.Sprintf("idempotency: record %q is corrupted: %s", e.Key, e.Reason)
}

func (e *CorruptedRecordError) Is(target error) bool { return target == ErrCorruptedRecord }

// ResponseNotStoredError is returned to a duplicate of an invocation that
// succeeded but whose response was too large to store. The handler is not
// run again.
type ResponseNotStoredError struct {
	Key string
}

func (e *ResponseNotStoredError) Error() string {
	return fmt.Sprintf("idempotency: key %q completed but its response was too large to store", e.Key)
}

func (e *ResponseNotStoredError) Is(target error) bool { return target == ErrResponseNotStored }

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

func (e *ConfigError) Is(target error) bool { return target == ErrConfig }
