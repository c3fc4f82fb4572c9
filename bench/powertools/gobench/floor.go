package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// sdkFloor makes, for one call, the DynamoDB requests that the library
// makes on the same path, with the AWS SDK for Go and nothing else: no
// event decoding, no key search, no records, no handler. Its CPU time per
// call is the least any Go library on aws-sdk-go-v2 can spend on that path,
// the floor that the comparison measures ours against.
//
//   - new: the conditional put of an IN_PROGRESS record, then the put of
//     the COMPLETED one conditioned on the lease token (dynamo.Store's
//     Acquire and Complete);
//   - dup: the conditional put, which fails and returns the stored item
//     (ALL_OLD).
//
// The comparison is fair in what the SDK does: the floor's client and the
// one the library is given are made alike (newDynamoDBClient: the SDK's
// defaults, its own default HTTP client, the same endpoint), each call has
// the same context, and bench-compare counts the requests of both at its
// proxy. It is not in one thing, against ours: on a new key the library
// also runs the handler, decoding the event and encoding the reply (about
// 14,000 instructions, 1.5 % of the call's), which the floor leaves out.
type sdkFloor struct {
	client *dynamodb.Client
	table  string
}

// call makes the requests for the key id. complete is false on the dup
// path, where the conditional put is expected to fail.
func (f sdkFloor) call(ctx context.Context, id string, complete bool) error {
	now := time.Now()
	token := strconv.FormatInt(now.UnixNano(), 36)
	_, err := f.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(f.table),
		Item: map[string]types.AttributeValue{
			"id":                     &types.AttributeValueMemberS{Value: id},
			"status":                 &types.AttributeValueMemberS{Value: "INPROGRESS"},
			"expiration":             number(now.Add(time.Hour).Unix()),
			"in_progress_expiration": number(now.Add(30 * time.Second).UnixMilli()),
			"lease_token":            &types.AttributeValueMemberS{Value: token},
		},
		ConditionExpression: aws.String("attribute_not_exists(#id) OR #expiry <= :now OR " +
			"(#status = :inprogress AND (attribute_not_exists(#lease) OR #lease <= :nowms))"),
		ExpressionAttributeNames: map[string]string{
			"#id": "id", "#expiry": "expiration", "#status": "status", "#lease": "in_progress_expiration",
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now":        number(now.Unix()),
			":nowms":      number(now.UnixMilli()),
			":inprogress": &types.AttributeValueMemberS{Value: "INPROGRESS"},
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if !complete {
		var failed *types.ConditionalCheckFailedException
		if errors.As(err, &failed) && len(failed.Item) > 0 {
			return nil
		}
		return fmt.Errorf("duplicate put: want a failed condition with the stored item, got %v", err)
	}
	if err != nil {
		return err
	}
	_, err = f.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(f.table),
		Item: map[string]types.AttributeValue{
			"id":          &types.AttributeValueMemberS{Value: id},
			"status":      &types.AttributeValueMemberS{Value: "COMPLETED"},
			"expiration":  number(now.Add(time.Hour).Unix()),
			"data":        &types.AttributeValueMemberS{Value: `{"ok":true,"id":"` + id + `"}`},
			"lease_token": &types.AttributeValueMemberS{Value: token},
		},
		ConditionExpression:       aws.String("#token = :token"),
		ExpressionAttributeNames:  map[string]string{"#token": "lease_token"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":token": &types.AttributeValueMemberS{Value: token}},
	})
	return err
}

func number(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// bareCall is the handler with no idempotency, called as aws-lambda-go
// calls it: the event decoded with encoding/json, the reply encoded. Its
// CPU time per call is what a Go Lambda function spends on this call
// without the library: the floor that the in-memory comparison measures
// ours against.
func bareCall(ctx context.Context, payload []byte) error {
	var e event
	if err := json.Unmarshal(payload, &e); err != nil {
		return err
	}
	r, err := handler(ctx, e)
	if err != nil {
		return err
	}
	_, err = json.Marshal(r)
	return err
}
