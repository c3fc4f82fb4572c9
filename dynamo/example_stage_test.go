package dynamo_test

import (
	"context"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

type transfer struct {
	ID    string `json:"id"`
	Cents int    `json:"cents"`
}

// The handler stages its ledger write; the middleware commits it with the
// idempotency record in one TransactWriteItems, so the movement exists
// exactly when its receipt does. (Compiled, not run: invoking the handler
// needs DynamoDB.)
func ExampleStage() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	store, err := dynamo.New(dynamodb.NewFromConfig(cfg), func(o *dynamo.Options) { o.TableName = "idempotency" })
	if err != nil {
		log.Fatal(err)
	}
	move := func(ctx context.Context, t transfer) (string, error) {
		err := dynamo.Stage(ctx, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String("ledger"),
			Item: map[string]types.AttributeValue{
				"transfer_id": &types.AttributeValueMemberS{Value: t.ID},
				"cents":       &types.AttributeValueMemberN{Value: "100"},
			},
			ConditionExpression: aws.String("attribute_not_exists(transfer_id)"),
		}})
		if err != nil {
			return "", err
		}
		return "moved " + t.ID, nil
	}
	handler := idempotency.Wrap(store, move, idempotency.WithEventKey("id"), idempotency.WithKeyPrefix("transfers"))
	_ = handler // lambda.Start(handler)
}
