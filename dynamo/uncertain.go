package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Reclaim replaces an UNCERTAIN record with rec, for the invocation that
// reconciles it, with one PutItem conditioned on
//
//	#status = :uncertain AND (#token = :token OR #token = :own)
//
// where token is the one the caller read: of two invocations that read the
// same record, the second finds another token and gets
// [idempotency.ErrLeaseLost]. :own is rec's token: the SDK's retry of a
// PutItem that was applied, its reply lost, finds the record its own.
func (s *Store) Reclaim(ctx context.Context, rec *idempotency.Record, token string) error {
	if rec.Key == "" {
		return errEmptyKey
	}
	item := s.opts.encode(rec)
	// A response, which an operator's completion writes, is kept in the
	// invocation's format, as Complete keeps it.
	if err := s.opts.typeScriptData(ctx, item, rec); err != nil {
		return err
	}
	if size := itemSize(item); size > maxItemSize {
		return errTooLarge("reclaim", rec.Key, size)
	}
	cond, names, values := s.tokenCondition(token)
	names["#status"] = s.opts.StatusAttr
	if values == nil {
		values = map[string]types.AttributeValue{}
	}
	values[":uncertain"] = &types.AttributeValueMemberS{Value: string(idempotency.StatusUncertain)}
	values[":own"] = &types.AttributeValueMemberS{Value: rec.LeaseToken}
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(s.opts.TableName),
		Item:                      item,
		ConditionExpression:       aws.String("#status = :uncertain AND ((" + cond + ") OR #token = :own)"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	if err != nil {
		return requestError("reclaim", rec.Key, err)
	}
	return nil
}
