package batch

import (
	"context"
	"errors"

	"github.com/aws/aws-lambda-go/events"
)

// KinesisFunc processes one Kinesis record.
type KinesisFunc func(ctx context.Context, rec events.KinesisEventRecord) error

// DynamoDBFunc processes one DynamoDB Streams record.
type DynamoDBFunc func(ctx context.Context, rec events.DynamoDBEventRecord) error

// Kinesis runs fn on every record of event, by the rules in the package
// doc. Failures are identified by sequence number.
func (p *Processor) Kinesis(ctx context.Context, event events.KinesisEvent, fn KinesisFunc) *Result {
	if event.Records == nil {
		return &Result{noRecords: "Kinesis"}
	}
	return p.run(ctx, &kinesisRecords{recs: event.Records, fn: fn}, false)
}

// DynamoDB runs fn on every record of event, by the rules in the package
// doc. Failures are identified by sequence number.
func (p *Processor) DynamoDB(ctx context.Context, event events.DynamoDBEvent, fn DynamoDBFunc) *Result {
	if event.Records == nil {
		return &Result{noRecords: "DynamoDB Streams"}
	}
	return p.run(ctx, &dynamoDBRecords{recs: event.Records, fn: fn}, false)
}

// KinesisHandler returns a Lambda handler that processes Kinesis events
// with fn and reports partial batch failures, and panics with a
// [*ConfigError] when fn is nil or an option is invalid.
func KinesisHandler(fn KinesisFunc, opts ...Option) func(context.Context, events.KinesisEvent) (events.KinesisEventResponse, error) {
	if fn == nil {
		panic(&ConfigError{Name: "KinesisHandler", Err: errors.New("record function is nil")})
	}
	p := mustNew(opts)
	return func(ctx context.Context, event events.KinesisEvent) (events.KinesisEventResponse, error) {
		res := p.Kinesis(ctx, event, fn)
		return res.KinesisResponse(), res.Err()
	}
}

// DynamoDBHandler returns a Lambda handler that processes DynamoDB Streams
// events with fn and reports partial batch failures, and panics with a
// [*ConfigError] when fn is nil or an option is invalid.
func DynamoDBHandler(fn DynamoDBFunc, opts ...Option) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	if fn == nil {
		panic(&ConfigError{Name: "DynamoDBHandler", Err: errors.New("record function is nil")})
	}
	p := mustNew(opts)
	return func(ctx context.Context, event events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		res := p.DynamoDB(ctx, event, fn)
		return res.DynamoDBResponse(), res.Err()
	}
}

type kinesisRecords struct {
	recs []events.KinesisEventRecord
	fn   KinesisFunc
}

func (r *kinesisRecords) len() int         { return len(r.recs) }
func (r *kinesisRecords) id(i int) string  { return r.recs[i].Kinesis.SequenceNumber }
func (r *kinesisRecords) group(int) string { return "" }
func (r *kinesisRecords) call(ctx context.Context, i int) error {
	return r.fn(ctx, r.recs[i])
}

type dynamoDBRecords struct {
	recs []events.DynamoDBEventRecord
	fn   DynamoDBFunc
}

func (r *dynamoDBRecords) len() int         { return len(r.recs) }
func (r *dynamoDBRecords) id(i int) string  { return r.recs[i].Change.SequenceNumber }
func (r *dynamoDBRecords) group(int) string { return "" }
func (r *dynamoDBRecords) call(ctx context.Context, i int) error {
	return r.fn(ctx, r.recs[i])
}
