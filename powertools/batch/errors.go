package batch

import (
	"errors"
	"fmt"
)

// Sentinels, each matched with errors.Is by the typed error that carries
// the details.
var (
	// ErrAllFailed means every record of the batch failed: the handler
	// returns it so that Lambda retries the whole batch.
	ErrAllFailed = errors.New("batch: every record failed")
	// ErrSkipped marks a FIFO record that was not run because a record
	// before it (in the batch, or in its message group) failed.
	ErrSkipped = errors.New("batch: record skipped after an earlier failure")
	// ErrPanic marks a record whose function panicked.
	ErrPanic = errors.New("batch: record function panicked")
	// ErrConfig marks an invalid option.
	ErrConfig = errors.New("batch: invalid configuration")
	// ErrNoRecords means the event has no Records array at all (it is
	// absent or null), as when a trigger of another kind is routed to the
	// handler. An empty array is an empty batch.
	ErrNoRecords = errors.New("batch: the event has no Records array")
	// ErrNoIdentifier means a failed record has no identifier to report
	// in batchItemFailures: Lambda would read an empty one as a failure of
	// the whole batch while the invocation looked successful.
	ErrNoIdentifier = errors.New("batch: a failed record has no identifier")
)

// NoRecordsError is returned by [Result.Err] for an event without a
// Records array. Source is the kind of event the handler expected: "SQS",
// "Kinesis" or "DynamoDB Streams".
type NoRecordsError struct {
	Source string
}

func (e *NoRecordsError) Error() string {
	return fmt.Sprintf("batch: the event has no Records array, as every %s event has (is another trigger routed to this function?)", e.Source)
}

func (e *NoRecordsError) Is(target error) bool { return target == ErrNoRecords }

// NoIdentifierError is returned by [Result.Err] when a failed record has
// no identifier: the handler fails, so that Lambda retries the whole
// batch, rather than report an empty itemIdentifier.
type NoIdentifierError struct {
	Failure *RecordError
}

func (e *NoIdentifierError) Error() string {
	return fmt.Sprintf("batch: record %d failed and has no identifier to report: %v", e.Failure.Index, e.Failure.Err)
}

func (e *NoIdentifierError) Is(target error) bool { return target == ErrNoIdentifier }

func (e *NoIdentifierError) Unwrap() error { return e.Failure }

// RecordError is the failure of one record. ID is the identifier Lambda
// expects in batchItemFailures: the SQS message id, or the Kinesis or
// DynamoDB Streams sequence number. Err is the function's own error
// unchanged, a [*PanicError], a [*SkippedError], or ctx's error when the
// record was not started because the invocation was ending.
type RecordError struct {
	ID    string
	Index int // position of the record in the event
	Err   error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("batch: record %d (%s): %v", e.Index, e.ID, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// BatchError is returned by [Result.Err] when every record failed.
// Failures holds one [*RecordError] per record, in record order; errors.Is
// and errors.As look through all of them.
type BatchError struct {
	Failures []*RecordError
}

func (e *BatchError) Error() string {
	if len(e.Failures) == 0 {
		return ErrAllFailed.Error()
	}
	return fmt.Sprintf("batch: all %d records failed; first: %v", len(e.Failures), e.Failures[0])
}

func (e *BatchError) Is(target error) bool { return target == ErrAllFailed }

func (e *BatchError) Unwrap() []error {
	errs := make([]error, len(e.Failures))
	for i, f := range e.Failures {
		errs[i] = f
	}
	return errs
}

// PanicError is a panic recovered from the record function.
type PanicError struct {
	Value any    // the value passed to panic
	Stack []byte // the goroutine's stack where it panicked
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("batch: record function panicked: %v", e.Value)
}

func (e *PanicError) Is(target error) bool { return target == ErrPanic }

// Unwrap returns the panic value when it is an error (panic(err)).
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// SkippedError is the error of a FIFO record that was not run because the
// record FailedID, before it, failed.
type SkippedError struct {
	FailedID string
}

func (e *SkippedError) Error() string {
	return fmt.Sprintf("batch: skipped because record %s before it failed", e.FailedID)
}

func (e *SkippedError) Is(target error) bool { return target == ErrSkipped }

// ConfigError is returned by [New], or panicked by the handler builders,
// when an option is invalid. Name is the option.
type ConfigError struct {
	Name string
	Err  error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("batch: invalid %s: %v", e.Name, e.Err) }

func (e *ConfigError) Unwrap() error { return e.Err }

func (e *ConfigError) Is(target error) bool { return target == ErrConfig }
