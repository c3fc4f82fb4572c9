package dynamo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file is the one place that reads the SDK's errors.

// conditionFailed reports whether err is DynamoDB's
// ConditionalCheckFailedException, with the item the server returned for
// ReturnValuesOnConditionCheckFailure=ALL_OLD (nil when it returned none).
func conditionFailed(err error) (item map[string]types.AttributeValue, ok bool) {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return nil, false
	}
	return ccf.Item, true
}

// requestError puts err, from the request op made for key, into the
// vocabulary of [idempotency.Store]: a failed condition is
// [idempotency.ErrLeaseLost] (only Complete and Release send conditions
// that can fail for that reason), an item over the size limit is
// [idempotency.ErrRecordTooLarge]. The SDK error stays reachable with
// errors.As.
func requestError(op, key string, err error) error {
	if _, ok := conditionFailed(err); ok {
		return fmt.Errorf("dynamo: %s %q: %w: %w", op, key, idempotency.ErrLeaseLost, err)
	}
	if itemTooLarge(err) {
		return fmt.Errorf("dynamo: %s %q: %w: %w", op, key, idempotency.ErrRecordTooLarge, err)
	}
	return fmt.Errorf("dynamo: %s %q: %w", op, key, err)
}

// itemTooLarge reports whether err is the ValidationException DynamoDB
// sends for an item over 400 KB. That exception has no type of its own in
// the SDK, and the message is the only thing that tells it from other
// validation failures: "Item size has exceeded the maximum allowed size"
// (PutItem), "Item size to update has exceeded the maximum allowed size"
// (UpdateItem).
func itemTooLarge(err error) bool {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "ValidationException" {
		return false
	}
	msg := strings.ToLower(apiErr.ErrorMessage())
	return strings.Contains(msg, "item size") && strings.Contains(msg, "maximum allowed size")
}

// errTooLarge is returned, without a request, for a record that cannot fit
// in an item.
func errTooLarge(op, key string, size int) error {
	return fmt.Errorf("dynamo: %s %q: item of at least %d bytes is over DynamoDB's limit of %d: %w", op, key, size, maxItemSize, idempotency.ErrRecordTooLarge)
}
