// Package itemsize is how this module bounds the size DynamoDB counts for
// an item, stated once for the two stores that hold records to DynamoDB's
// limit: github.com/gopowertools/lambda/dynamo, which counts the items it
// sends, and idempotencytest's in-memory store, which refuses the records
// dynamo would refuse. It does not import the AWS SDK, so that
// idempotencytest, which users import in their unit tests, does not
// either.
//
// The counts follow
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
// and are upper bounds: names, strings and binaries in bytes, a number at
// most one byte per digit plus one (DynamoDB counts about one per two
// significant digits), a boolean or a null one byte, a map or a list three
// bytes and one per element besides its elements.
package itemsize

import "github.com/gopowertools/lambda/powertools/idempotency"

// Max is DynamoDB's item size limit: 400 KB, which DynamoDB defines as
// 409,600 bytes, attribute names included. See
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items
const Max = 400 * 1024

// Scalar is the size of a BOOL or NULL value.
const Scalar = 1

// Number is the size of an N value whose text is text.
func Number(text string) int { return len(text) + 1 }

// Int is the size of an N value holding n in decimal.
func Int(n int64) int {
	digits := 1
	if n < 0 {
		digits++ // the sign
	}
	for n <= -10 || n >= 10 {
		n /= 10
		digits++
	}
	return digits + 1
}

// Nested is the size of an M or L value of n elements, besides the
// elements' names and values.
func Nested(n int) int { return 3 + n }

// Record is the size of the item that dynamo's store writes for rec with
// its default attribute names and one key attribute: each attribute's name
// and value, leaving out the zero times, empty strings and false flags
// that the store leaves out. dynamo's tests check it against the items
// the store encodes.
func Record(rec *idempotency.Record) int {
	size := len("id") + len(rec.Key) + len("status") + len(rec.Status)
	if !rec.Expiry.IsZero() {
		size += len("expiration") + Int(rec.Expiry.Unix())
	}
	if !rec.LeaseEnd.IsZero() {
		size += len("in_progress_expiration") + Int(rec.LeaseEnd.UnixMilli())
	}
	if rec.LeaseToken != "" {
		size += len("lease_token") + len(rec.LeaseToken)
	}
	if rec.PayloadHash != "" {
		size += len("validation") + len(rec.PayloadHash)
	}
	if len(rec.Response) > 0 {
		size += len("data") + len(rec.Response) // S or B: bytes either way
	}
	if rec.ResponseOmitted {
		size += len("response_omitted") + Scalar
	}
	if rec.ResponseOmittedReason != "" {
		size += len("response_omitted_reason") + len(rec.ResponseOmittedReason)
	}
	if !rec.CompletedAt.IsZero() {
		size += len("completed_at") + Int(rec.CompletedAt.UnixMilli())
	}
	if !rec.Deadline.IsZero() {
		size += len("invocation_deadline") + Int(rec.Deadline.UnixMilli())
	}
	return size
}
