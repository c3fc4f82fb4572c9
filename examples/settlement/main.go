// Command settlement is an AWS Lambda function for EventBridge settlement
// events: each settlement pays an account once, as one movement in a ledger
// table, however often the event is delivered.
//
// The ledger movement is not written by the handler: it is staged with
// dynamo.Stage and committed by the idempotency middleware in one
// TransactWriteItems together with the idempotency record (the receipt).
// No crash and no lost reply can leave a movement without its receipt, or a
// receipt without its movement. See docs/exactly-once.md.
//
// Environment:
//
//	POWERTOOLS_IDEMPOTENCY_TABLE  the DynamoDB table of idempotency records (required)
//	LEDGER_TABLE                  the DynamoDB table of ledger movements, keyed by
//	                              settlement_id (required)
//
// plus the AWS SDK's own variables (AWS_REGION, credentials,
// AWS_ENDPOINT_URL_DYNAMODB for a local DynamoDB) and the idempotency
// middleware's POWERTOOLS_IDEMPOTENCY_* variables.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	app, err := newAppFromEnv(context.Background(), log)
	if err != nil {
		// Failing the cold start is better than paying out with a broken
		// configuration.
		log.Error("settlement: configuration", "err", err)
		os.Exit(1)
	}
	lambda.Start(app.Handle)
}
