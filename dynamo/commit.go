package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// commit sends the staged writes and the COMPLETED record rec in one
// TransactWriteItems, the record last. Its put is conditioned on the lease
// token and on the record not being COMPLETED yet: a retry of a transaction
// that was applied (its reply lost) then fails on the record instead of
// being applied twice, and reading the record back tells that it was.
func (s *Store) commit(ctx context.Context, rec *idempotency.Record, writes []types.TransactWriteItem) error {
	if err := s.transactions(); err != nil {
		return &idempotency.CommitError{Key: rec.Key, State: idempotency.CommitRefused, Err: err}
	}
	tw := s.client.(TransactWriter)
	put, err := s.completePut(ctx, rec)
	if err != nil {
		return err
	}
	put.ConditionExpression = aws.String(aws.ToString(put.ConditionExpression) + " AND #status <> :complete")
	put.ExpressionAttributeNames["#status"] = s.opts.StatusAttr
	if put.ExpressionAttributeValues == nil {
		put.ExpressionAttributeValues = map[string]types.AttributeValue{}
	}
	put.ExpressionAttributeValues[":complete"] = &types.AttributeValueMemberS{Value: string(idempotency.StatusComplete)}
	put.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	all := append(writes[:len(writes):len(writes)], types.TransactWriteItem{Put: &put})
	if err := s.checkTransaction(all, 0); err != nil {
		var limit *TransactionLimitError
		if errors.As(err, &limit) && limit.Limit == LimitSize && len(rec.Response) > 0 {
			// The response is what makes it too large: the middleware
			// then completes without it, as for a record over 400 KB.
			return fmt.Errorf("dynamo: complete %q: %w: %w", rec.Key, idempotency.ErrRecordTooLarge, err)
		}
		return &idempotency.CommitError{Key: rec.Key, State: idempotency.CommitRefused, Err: err}
	}
	_, err = tw.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: all})
	if err == nil {
		return nil
	}
	return s.commitError(ctx, rec, len(writes), err)
}

// commitError maps the failure of the transaction that commits rec after
// n staged writes to a *idempotency.CommitError, or to nil when the
// transaction turns out to have been applied.
func (s *Store) commitError(ctx context.Context, rec *idempotency.Record, n int, err error) error {
	var canceled *types.TransactionCanceledException
	if errors.As(err, &canceled) {
		reasons := canceled.CancellationReasons
		if len(reasons) == n+1 {
			if aws.ToString(reasons[n].Code) == "ConditionalCheckFailed" {
				return s.recordRefused(ctx, rec, reasons[n].Item, err)
			}
			for i, r := range reasons[:n] {
				if code := aws.ToString(r.Code); code != "" && code != "None" {
					return refused(rec, &StagedWriteError{Index: i, Code: code, Message: aws.ToString(r.Message), Err: err})
				}
			}
		}
		return refused(rec, &TransactionError{Code: canceled.ErrorCode(), Message: canceled.ErrorMessage(), Err: err})
	}
	// Whatever the last attempt was told, an earlier attempt of the same
	// request may have been applied, its reply lost: the SDK retries a
	// lost reply, and a throttled or refused last attempt says nothing of
	// the first (the simulator's seed 1260 on dynamo: applied, then
	// throttled twice; taken for refused, the key was released and the
	// staged writes committed a second time). The record tells: the
	// transaction made it COMPLETED under this token, or was not applied.
	item, gerr := s.getItem(ctx, rec.Key)
	if gerr == nil && s.completedBy(ctx, rec, item) {
		return nil
	}
	var apiErr smithy.APIError
	var resp *awshttp.ResponseError
	if gerr == nil && errors.As(err, &apiErr) && errors.As(err, &resp) && resp.HTTPStatusCode() >= 400 && resp.HTTPStatusCode() < 500 &&
		apiErr.ErrorCode() != "TransactionInProgressException" {
		// The server refused the request, and the record shows that no
		// attempt was applied.
		return refused(rec, &TransactionError{Code: apiErr.ErrorCode(), Message: apiErr.ErrorMessage(), Err: err})
	}
	// No answer, or a server fault: the transaction may have been applied.
	return &idempotency.CommitError{Key: rec.Key, State: idempotency.CommitUnknown, Err: err}
}

// refused reports that the transaction committing rec was refused, for
// the reason err: nothing of it was applied.
func refused(rec *idempotency.Record, err error) error {
	return &idempotency.CommitError{Key: rec.Key, State: idempotency.CommitRefused, Err: err}
}

// recordRefused maps a transaction cancelled on the record's condition.
// old is the record as DynamoDB returned it, if it did.
func (s *Store) recordRefused(ctx context.Context, rec *idempotency.Record, old map[string]types.AttributeValue, err error) error {
	if len(old) == 0 {
		var gerr error
		if old, gerr = s.getItem(ctx, rec.Key); gerr != nil {
			return &idempotency.CommitError{Key: rec.Key, State: idempotency.CommitUnknown, Err: err}
		}
	}
	if s.completedBy(ctx, rec, old) {
		// An earlier attempt of this very transaction was applied and its
		// reply lost; the SDK's retry found the record COMPLETED.
		return nil
	}
	return &idempotency.CommitError{Key: rec.Key, State: idempotency.CommitLeaseLost, Err: err}
}

// completedBy reports whether item is rec's record, COMPLETED under rec's
// lease token.
func (s *Store) completedBy(ctx context.Context, rec *idempotency.Record, item map[string]types.AttributeValue) bool {
	if len(item) == 0 {
		return false
	}
	got, err := s.opts.decodeIn(ctx, rec.Key, item)
	return err == nil && got.Status == idempotency.StatusComplete && got.LeaseToken == rec.LeaseToken
}
