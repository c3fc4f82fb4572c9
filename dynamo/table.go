package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TableClient is the part of the DynamoDB API [CreateTable] uses;
// *dynamodb.Client satisfies it.
type TableClient interface {
	CreateTable(ctx context.Context, params *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(ctx context.Context, params *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	DescribeTimeToLive(ctx context.Context, params *dynamodb.DescribeTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error)
	UpdateTimeToLive(ctx context.Context, params *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

var _ TableClient = (*dynamodb.Client)(nil)

// tableWait bounds the wait for a new table to become ACTIVE; ctx may end
// it sooner.
const tableWait = 5 * time.Minute

// CreateTable creates the table that a [Store] made with the same options
// uses: on-demand capacity, the key schema of Options (a partition key
// KeyAttr, plus a sort key SortKeyAttr in composite mode, both S), waits
// until it is ACTIVE, and turns on TTL on ExpiryAttr, so that DynamoDB
// deletes expired records. A table that exists already is left as it is,
// apart from TTL, which is turned on if it is off; TTL on another attribute
// is an error, since the records would never be deleted.
func CreateTable(ctx context.Context, client TableClient, optFns ...func(*Options)) error {
	o, err := options(optFns)
	if err != nil {
		return err
	}
	if err := createTable(ctx, client, &o); err != nil {
		return err
	}
	return enableTTL(ctx, client, &o)
}

// createTable creates the table unless it exists, and waits for it.
func createTable(ctx context.Context, client TableClient, o *Options) error {
	attrs := []types.AttributeDefinition{{AttributeName: aws.String(o.KeyAttr), AttributeType: types.ScalarAttributeTypeS}}
	schema := []types.KeySchemaElement{{AttributeName: aws.String(o.KeyAttr), KeyType: types.KeyTypeHash}}
	if o.SortKeyAttr != "" {
		attrs = append(attrs, types.AttributeDefinition{AttributeName: aws.String(o.SortKeyAttr), AttributeType: types.ScalarAttributeTypeS})
		schema = append(schema, types.KeySchemaElement{AttributeName: aws.String(o.SortKeyAttr), KeyType: types.KeyTypeRange})
	}
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(o.TableName),
		AttributeDefinitions: attrs,
		KeySchema:            schema,
		BillingMode:          types.BillingModePayPerRequest,
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("dynamo: create table %q: %w", o.TableName, err)
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(w *dynamodb.TableExistsWaiterOptions) {
		// The default first retry comes after 20 s; a new on-demand table
		// is usually ACTIVE within seconds.
		w.MinDelay = time.Second
		w.MaxDelay = 10 * time.Second
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(o.TableName)}, tableWait); err != nil {
		return fmt.Errorf("dynamo: wait for table %q: %w", o.TableName, err)
	}
	return nil
}

// enableTTL turns on TTL on the expiry attribute unless it is on already.
func enableTTL(ctx context.Context, client TableClient, o *Options) error {
	out, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(o.TableName)})
	if err != nil {
		return fmt.Errorf("dynamo: describe TTL of table %q: %w", o.TableName, err)
	}
	if d := out.TimeToLiveDescription; d != nil {
		switch d.TimeToLiveStatus {
		case types.TimeToLiveStatusEnabled, types.TimeToLiveStatusEnabling:
			if attr := aws.ToString(d.AttributeName); attr != o.ExpiryAttr {
				return fmt.Errorf("dynamo: table %q has TTL on attribute %q, not on the expiry attribute %q", o.TableName, attr, o.ExpiryAttr)
			}
			return nil
		}
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(o.TableName),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(o.ExpiryAttr),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil {
		return fmt.Errorf("dynamo: enable TTL on %q of table %q: %w", o.ExpiryAttr, o.TableName, err)
	}
	return nil
}
