// Command minimal is the smallest complete idempotent Lambda function: the
// one in README.md and docs/getting-started.md (a test keeps them equal).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

type Order struct {
	OrderID string `json:"order_id"`
	Amount  int64  `json:"amount"`
}

type Receipt struct {
	OrderID string `json:"order_id"`
	Status  string `json:"status"`
}

// fulfil runs once per order_id; a repeated event gets the stored Receipt.
func fulfil(ctx context.Context, o Order) (Receipt, error) {
	// Charge, ship, send the e-mail: whatever must not happen twice.
	return Receipt{OrderID: o.OrderID, Status: "fulfilled"}, nil
}

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		panic(err)
	}
	// The table is named by POWERTOOLS_IDEMPOTENCY_TABLE.
	store, err := dynamo.New(dynamodb.NewFromConfig(cfg))
	if err != nil {
		panic(err)
	}
	lambda.Start(idempotency.Wrap(store, fulfil,
		idempotency.WithEventKey("order_id"),
		idempotency.WithPayloadValidation("amount"),
	))
}
