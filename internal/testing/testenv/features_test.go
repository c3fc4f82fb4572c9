package testenv_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// These tests pin down which DynamoDB features each test server has, so that
// a store test that relies on one runs where it exists, and so that a
// change of server version that adds or drops one is noticed here first.

// TestReturnOldItemOnConditionFailure checks ReturnValuesOnConditionCheckFailure
// ALL_OLD: DynamoDB returns the item that failed the condition inside the
// ConditionalCheckFailedException, saving the store a read.
func TestReturnOldItemOnConditionFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		server  string
		env     string
		wantOld bool // whether the server returns the old item
	}{
		{"moto", servers[0].env, true},
		{"dynalite", servers[1].env, false}, // dynalite 4.0.0 ignores the parameter
	} {
		t.Run(tc.server, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			client := rawClient(t, tc.env)
			table := newTable(t, client)
			put := func() error {
				_, err := client.PutItem(ctx, &dynamodb.PutItemInput{
					TableName:                           aws.String(table),
					Item:                                map[string]types.AttributeValue{"id": str("k"), "v": str("old")},
					ConditionExpression:                 aws.String("attribute_not_exists(id)"),
					ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
				})
				return err
			}
			if err := put(); err != nil {
				t.Fatalf("first PutItem: %v", err)
			}
			err := put()
			var ccf *types.ConditionalCheckFailedException
			if !errors.As(err, &ccf) {
				t.Fatalf("second PutItem: want ConditionalCheckFailedException, got %v", err)
			}
			v, _ := ccf.Item["v"].(*types.AttributeValueMemberS)
			gotOld := v != nil && v.Value == "old"
			if gotOld != tc.wantOld {
				t.Errorf("old item returned = %v, want %v (exception item: %v)", gotOld, tc.wantOld, ccf.Item)
			}
			if !gotOld && len(ccf.Item) != 0 {
				t.Errorf("exception item = %v, want the old item or nothing", ccf.Item)
			}
			t.Logf("ALL_OLD on condition failure returned %d attributes; old item returned: %v", len(ccf.Item), gotOld)
		})
	}
}

// TestTransactWriteItems checks that a transaction writes all or nothing and
// reports a failed condition as TransactionCanceledException with the
// reason ConditionalCheckFailed.
func TestTransactWriteItems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		server    string
		env       string
		supported bool
	}{
		{"moto", servers[0].env, true},
		{"dynalite", servers[1].env, false}, // dynalite 4.0.0 has no transactions
	} {
		t.Run(tc.server, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			client := rawClient(t, tc.env)
			table := newTable(t, client)
			write := func(keys ...string) error {
				in := &dynamodb.TransactWriteItemsInput{}
				for _, k := range keys {
					in.TransactItems = append(in.TransactItems, types.TransactWriteItem{Put: &types.Put{
						TableName:           aws.String(table),
						Item:                map[string]types.AttributeValue{"id": str(k)},
						ConditionExpression: aws.String("attribute_not_exists(id)"),
					}})
				}
				_, err := client.TransactWriteItems(ctx, in)
				return err
			}

			err := write("a", "b")
			if !tc.supported {
				if !unknownOperation(err) {
					t.Fatalf("TransactWriteItems on a server recorded as having no transactions: want UnknownOperationException, got %v; update this test and testenv's docs", err)
				}
				t.Logf("TransactWriteItems is unsupported, as recorded: %v", err)
				return
			}
			if err != nil {
				t.Fatalf("TransactWriteItems(a, b): %v", err)
			}
			// "b" exists, so the whole transaction fails and "c" is not written.
			err = write("c", "b")
			var tce *types.TransactionCanceledException
			if !errors.As(err, &tce) {
				t.Fatalf("TransactWriteItems(c, b): want TransactionCanceledException, got %v", err)
			}
			var codes []string
			for _, r := range tce.CancellationReasons {
				codes = append(codes, aws.ToString(r.Code))
			}
			if len(codes) != 2 || codes[1] != "ConditionalCheckFailed" {
				t.Errorf("cancellation reasons = %q, want [None ConditionalCheckFailed]", codes)
			}
			for key, want := range map[string]bool{"a": true, "b": true, "c": false} {
				out, err := client.GetItem(ctx, &dynamodb.GetItemInput{
					TableName:      aws.String(table),
					Key:            map[string]types.AttributeValue{"id": str(key)},
					ConsistentRead: aws.Bool(true),
				})
				if err != nil {
					t.Fatalf("GetItem %s: %v", key, err)
				}
				if got := out.Item != nil; got != want {
					t.Errorf("item %s stored = %v, want %v", key, got, want)
				}
			}
		})
	}
}

// TestTimeToLive checks the TTL API that dynamo.CreateTable uses to enable
// expiry on the table.
func TestTimeToLive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		server    string
		env       string
		supported bool
	}{
		{"moto", servers[0].env, true},
		{"dynalite", servers[1].env, false}, // dynalite 4.0.0 has no TTL API
	} {
		t.Run(tc.server, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			client := rawClient(t, tc.env)
			table := newTable(t, client)
			_, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
				TableName: aws.String(table),
				TimeToLiveSpecification: &types.TimeToLiveSpecification{
					AttributeName: aws.String("expiration"),
					Enabled:       aws.Bool(true),
				},
			})
			if !tc.supported {
				if !unknownOperation(err) {
					t.Fatalf("UpdateTimeToLive on a server recorded as having no TTL API: want UnknownOperationException, got %v; update this test and testenv's docs", err)
				}
				t.Logf("UpdateTimeToLive is unsupported, as recorded: %v", err)
				return
			}
			if err != nil {
				t.Fatalf("UpdateTimeToLive: %v", err)
			}
			out, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
			if err != nil {
				t.Fatalf("DescribeTimeToLive: %v", err)
			}
			d := out.TimeToLiveDescription
			if d != nil {
				t.Logf("DescribeTimeToLive: %s on %q", d.TimeToLiveStatus, aws.ToString(d.AttributeName))
			}
			if d == nil || aws.ToString(d.AttributeName) != "expiration" ||
				(d.TimeToLiveStatus != types.TimeToLiveStatusEnabled && d.TimeToLiveStatus != types.TimeToLiveStatusEnabling) {
				t.Errorf("DescribeTimeToLive = %+v, want attribute expiration ENABLED or ENABLING", d)
			}
		})
	}
}

// unknownOperation reports whether err is the server saying it does not
// implement the operation at all.
func unknownOperation(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "UnknownOperationException"
}
