package batch

import "fmt"

// Each failure is one type, with its details as fields; match it with
// errors.As or errors.AsType.

// NoRecordsError is returned by [Result.Err] for an event without a
// Records array. Source is the kind of event the handler expected: "SQS",
// "Kinesis" or "DynamoDB Streams".
type NoRecordsError struct {
	Source string
}

func (e *NoRecordsError) Error() string {
	return fmt.Sprintf("batch: the event has no Records array, as every %s event has (is another trigger routed to this function?)", e.Source)
}

// NoIdentifierError is returned by [Result.Err] when a failed record has
// no identifier: the handler fails, so that Lambda retries the whole
// batch, rather than report an empty itemIdentifier.
type NoIdentifierError struct {
	Failure *RecordError
}

func (e *NoIdentifierError) Error() string {
	return fmt.Sprintf("batch: record %d failed and has no identifier to report: %v", e.Failure.Index, e.Failure.Err)
}

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
		return "batch: every record failed"
	}
	return fmt.Sprintf("batch: all %d records failed; first: %v", len(e.Failures), e.Failures[0])
}

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

// ConfigError is returned by [New], or panicked by the handler builders,
// when an option is invalid. Name is the option.
type ConfigError struct {
	Name string
	Err  error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("batch: invalid %s: %v", e.Name, e.Err) }

func (e *ConfigError) Unwrap() error { return e.Err }
