package batch

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// SQSFunc processes one SQS message.
type SQSFunc func(ctx context.Context, msg events.SQSMessage) error

// SQS runs fn on every message of event, by the rules in the package doc.
// A queue whose ARN ends in ".fifo" gets the FIFO rules.
func (p *Processor) SQS(ctx context.Context, event events.SQSEvent, fn SQSFunc) *Result {
	if event.Records == nil {
		return &Result{noRecords: "SQS"}
	}
	fifo := len(event.Records) > 0 && strings.HasSuffix(event.Records[0].EventSourceARN, ".fifo")
	return p.run(ctx, &sqsRecords{msgs: event.Records, fn: fn}, fifo)
}

// SQSHandler returns a Lambda handler that processes SQS events with fn and
// reports partial batch failures, and panics with a [*ConfigError] when fn
// is nil or an option is invalid, so that a misconfigured function fails
// at cold start.
func SQSHandler(fn SQSFunc, opts ...Option) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	if fn == nil {
		panic(&ConfigError{Name: "SQSHandler", Err: errors.New("record function is nil")})
	}
	p := mustNew(opts)
	return func(ctx context.Context, event events.SQSEvent) (events.SQSEventResponse, error) {
		res := p.SQS(ctx, event, fn)
		return res.SQSResponse(), res.Err()
	}
}

type sqsRecords struct {
	msgs []events.SQSMessage
	fn   SQSFunc
}

func (r *sqsRecords) len() int           { return len(r.msgs) }
func (r *sqsRecords) id(i int) string    { return r.msgs[i].MessageId }
func (r *sqsRecords) group(i int) string { return r.msgs[i].Attributes["MessageGroupId"] }
func (r *sqsRecords) call(ctx context.Context, i int) error {
	return r.fn(ctx, r.msgs[i])
}
