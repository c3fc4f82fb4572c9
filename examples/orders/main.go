// Command orders is an AWS Lambda function that consumes an SQS queue of
// orders: for each message it asks the fulfilment service to fulfil the
// order, once per order_id however often the order is delivered or sent.
//
// A message whose body is not an order, or whose fulfilment the service
// refuses (any non-2xx reply, 429 included), fails alone: the function
// reports it in batchItemFailures, Lambda deletes the others, and the queue
// delivers it again after its visibility timeout, until the redrive policy
// moves it to the dead-letter queue.
//
// Environment:
//
//	POWERTOOLS_IDEMPOTENCY_TABLE  the DynamoDB table of idempotency records (required)
//	FULFILMENT_URL                the fulfilment service's base URL (required)
//	FULFILMENT_TIMEOUT            how long one fulfilment request may take (Go duration, default 5s)
//
// plus the AWS SDK's own variables (AWS_REGION, credentials,
// AWS_ENDPOINT_URL_DYNAMODB for a local DynamoDB) and
// POWERTOOLS_IDEMPOTENCY_DISABLED / POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gopowertools/lambda/powertools/batch"
)

func main() {
	// Lines logged with a record's context, the idempotency middleware's
	// included, name the record (record_id, record_index).
	log := slog.New(batch.NewLogHandler(slog.NewJSONHandler(os.Stdout, nil)))
	app, err := newAppFromEnv(context.Background(), log)
	if err != nil {
		// Failing the cold start shows up as an init error, and the
		// messages stay in the queue: better than failing every record.
		log.Error("orders: configuration", "err", err)
		os.Exit(1)
	}
	lambda.Start(app.Handle)
}
