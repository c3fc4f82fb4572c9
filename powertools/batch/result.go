package batch

import "github.com/aws/aws-lambda-go/events"

// Result is the outcome of a batch.
type Result struct {
	// Total is the number of records in the event.
	Total int
	// Failures holds the failed records in record order, skipped FIFO
	// records included. Nil when every record succeeded.
	Failures []*RecordError

	// noRecords is the kind of event, when it had no Records array.
	noRecords string
}

// Err returns a [*NoRecordsError] for an event without a Records array, a
// [*NoIdentifierError] when a failed record has no identifier to report,
// a [*BatchError] when every record of a non-empty batch failed, and nil
// otherwise. A handler returns it next to the response: with an error
// Lambda retries the whole batch, without one it retries only the records
// in batchItemFailures.
func (r *Result) Err() error {
	if r.noRecords != "" {
		return &NoRecordsError{Source: r.noRecords}
	}
	for _, f := range r.Failures {
		if f.ID == "" {
			return &NoIdentifierError{Failure: f}
		}
	}
	if r.Total > 0 && len(r.Failures) == r.Total {
		return &BatchError{Failures: r.Failures}
	}
	return nil
}

// SQSResponse is the partial batch response for an SQS event: the failed
// records' message ids. With no failure the list is empty, not null.
func (r *Result) SQSResponse() events.SQSEventResponse {
	out := make([]events.SQSBatchItemFailure, len(r.Failures))
	for i, f := range r.Failures {
		out[i] = events.SQSBatchItemFailure{ItemIdentifier: f.ID}
	}
	return events.SQSEventResponse{BatchItemFailures: out}
}

// KinesisResponse is the partial batch response for a Kinesis event: the
// failed records' sequence numbers.
func (r *Result) KinesisResponse() events.KinesisEventResponse {
	out := make([]events.KinesisBatchItemFailure, len(r.Failures))
	for i, f := range r.Failures {
		out[i] = events.KinesisBatchItemFailure{ItemIdentifier: f.ID}
	}
	return events.KinesisEventResponse{BatchItemFailures: out}
}

// DynamoDBResponse is the partial batch response for a DynamoDB Streams
// event: the failed records' sequence numbers.
func (r *Result) DynamoDBResponse() events.DynamoDBEventResponse {
	out := make([]events.DynamoDBBatchItemFailure, len(r.Failures))
	for i, f := range r.Failures {
		out[i] = events.DynamoDBBatchItemFailure{ItemIdentifier: f.ID}
	}
	return events.DynamoDBEventResponse{BatchItemFailures: out}
}
