package batch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/batch"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

type order struct {
	OrderID string `json:"order_id"`
	Amount  int64  `json:"amount"`
}

// A handler for an SQS queue: the malformed message alone is reported, and
// Lambda deletes the others.
func ExampleSQSHandler() {
	handler := batch.SQSHandler(func(ctx context.Context, msg events.SQSMessage) error {
		var o order
		if err := json.Unmarshal([]byte(msg.Body), &o); err != nil {
			return fmt.Errorf("malformed order: %w", err)
		}
		return nil
	}, batch.WithLogger(slog.New(slog.DiscardHandler)))

	resp, err := handler(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m1", Body: `{"order_id":"o-1","amount":100}`},
		{MessageId: "m2", Body: `not json`},
		{MessageId: "m3", Body: `{"order_id":"o-2","amount":250}`},
	}})
	fmt.Println(resp.BatchItemFailures, err)
	// Output: [{m2}] <nil>
}

// Each record is made idempotent on a business value of its body, the
// order id: the producer sent order o-1 twice, under two message ids, and
// it is shipped once. The second message gets the first one's result.
func Example_idempotentRecords() {
	store := idempotencytest.NewStore() // dynamo.New(...) in a function
	shipments := 0
	ship := idempotency.WrapFunc("ship", store, func(ctx context.Context, o order) (string, error) {
		shipments++
		return "shipment-" + o.OrderID, nil
	}, idempotency.WithEventKey("order_id"))

	handler := batch.SQSHandler(func(ctx context.Context, msg events.SQSMessage) error {
		var o order
		if err := json.Unmarshal([]byte(msg.Body), &o); err != nil {
			return err
		}
		id, err := ship(ctx, o)
		fmt.Println(msg.MessageId, "->", id)
		return err
	})

	resp, err := handler(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m1", Body: `{"order_id":"o-1","amount":100}`},
		{MessageId: "m2", Body: `{"order_id":"o-2","amount":250}`},
		{MessageId: "m3", Body: `{"order_id":"o-1","amount":100}`},
	}})
	fmt.Println("shipments:", shipments, "failures:", len(resp.BatchItemFailures), err)
	// Output:
	// m1 -> shipment-o-1
	// m2 -> shipment-o-2
	// m3 -> shipment-o-1
	// shipments: 2 failures: 0 <nil>
}

// On a FIFO queue the batch stops at the first failure: the failed message
// and every later one are reported, so none overtakes it.
func ExampleProcessor_SQS_fifo() {
	p, _ := batch.New(batch.WithLogger(slog.New(slog.DiscardHandler)))
	arn := "arn:aws:sqs:eu-west-1:123456789012:orders.fifo"
	res := p.SQS(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m1", EventSourceARN: arn, Body: "ok"},
		{MessageId: "m2", EventSourceARN: arn, Body: "fail"},
		{MessageId: "m3", EventSourceARN: arn, Body: "ok"},
	}}, func(ctx context.Context, msg events.SQSMessage) error {
		if msg.Body == "fail" {
			return errors.New("downstream refused")
		}
		return nil
	})
	for _, f := range res.Failures {
		fmt.Println(f.ID, errors.As(f, new(*batch.SkippedError)))
	}
	// Output:
	// m2 false
	// m3 true
}
