// Command createtable creates the idempotency table of the function beside
// it on a local DynamoDB, with the library's own key schema and TTL.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gopowertools/lambda/dynamo"
)

func main() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// The table is named by POWERTOOLS_IDEMPOTENCY_TABLE, as in the
	// function. An existing table is kept.
	if err := dynamo.CreateTable(ctx, dynamodb.NewFromConfig(cfg)); err != nil {
		log.Fatal(err)
	}
	log.Print("table ready")
}
