package dynamo_test

import (
	"context"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/gopowertools/lambda/dynamo"
)

// A store on the table named by POWERTOOLS_IDEMPOTENCY_TABLE, made once at
// cold start. (Compiled, not run: it needs a Lambda environment, where
// that variable and the AWS configuration are set.)
func ExampleNew() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	store, err := dynamo.New(dynamodb.NewFromConfig(cfg))
	if err != nil {
		log.Fatal(err) // a *idempotency.ConfigError when the table name is missing
	}
	_ = store // pass it to idempotency.Wrap
}

// Composite mode shares one table between functions: every record has the
// partition key StaticPartitionKey and the idempotency key as sort key.
func ExampleNew_composite() {
	store, err := dynamo.New(dynamodb.New(dynamodb.Options{Region: "eu-west-1"}), func(o *dynamo.Options) {
		o.TableName = "idempotency"
		o.KeyAttr = "pk"
		o.SortKeyAttr = "sk"
		o.StaticPartitionKey = "idempotency#orders"
	})
	fmt.Println(store != nil, err)
	// Output: true <nil>
}

// CreateTable, for a deployment script or a test: it is safe to run again.
// (Compiled, not run: it needs DynamoDB.)
func ExampleCreateTable() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	err = dynamo.CreateTable(context.Background(), dynamodb.NewFromConfig(cfg), func(o *dynamo.Options) {
		o.TableName = "idempotency"
	})
	if err != nil {
		log.Fatal(err)
	}
}
