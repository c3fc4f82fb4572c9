package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/batch"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// deadlineMargin is kept free at the end of each invocation to return the
// partial batch response: a batch that ran into the timeout would return
// nothing, and Lambda would retry its fulfilled orders too.
const deadlineMargin = time.Second

// App is the function: it holds what is built once, at cold start.
type App struct {
	batch  *batch.Processor
	fulfil func(context.Context, Order) (Fulfilment, error)
}

// NewApp builds the function over an idempotency store and a fulfilment
// client. opts are added to the idempotency options (tests set a clock).
//
// The key is the order id, not the message id: a producer that sends an
// order twice sends two messages, and only the order id tells that they are
// one order. The payload validation catches an order id reused for a
// different order, which is a producer bug rather than a retry.
//
// Records run one at a time: with the event source mapping's
// MaximumConcurrency of 20, the fulfilment service sees at most 20 calls at
// once, the limit it accepts.
func NewApp(store idempotency.Store, client *FulfilmentClient, log *slog.Logger, opts ...idempotency.Option) (*App, error) {
	base := []idempotency.Option{
		idempotency.WithEventKey("order_id"),
		idempotency.WithPayloadValidation("[customer, amount, currency]"),
		idempotency.WithLogger(log),
	}
	fulfil := idempotency.WrapFunc("orders.fulfil", store, client.Fulfil, append(base, opts...)...)
	proc, err := batch.New(batch.WithLogger(log), batch.WithDeadlineMargin(deadlineMargin))
	if err != nil {
		return nil, err
	}
	return &App{batch: proc, fulfil: fulfil}, nil
}

// Handle processes one batch of the orders queue and reports the messages
// that failed.
func (a *App) Handle(ctx context.Context, event events.SQSEvent) (events.SQSEventResponse, error) {
	res := a.batch.SQS(ctx, event, a.process)
	return res.SQSResponse(), res.Err()
}

func (a *App) process(ctx context.Context, msg events.SQSMessage) error {
	order, err := parseOrder(msg.Body)
	if err != nil {
		return err
	}
	f, err := a.fulfil(ctx, order)
	if err != nil {
		return err
	}
	batch.Logger(ctx).InfoContext(ctx, "orders: fulfilled", "order_id", order.OrderID, "fulfilment_id", f.ID)
	return nil
}
