// Package itemsize is how this module bounds the size DynamoDB counts for
// an item, stated once for the two stores that hold records to DynamoDB's
// limit: github.com/gopowertools/lambda/dynamo, which counts the items it
// sends, and idempotencytest's in-memory store, which refuses the records
// dynamo would refuse. It imports neither the AWS SDK, so that
// idempotencytest, which users import in their unit tests, does not
// either, nor the idempotency package, which it sits below.
//
// The counts follow
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
// and are upper bounds: names, strings and binaries in bytes, a number at
// most one byte per digit plus one (DynamoDB counts about one per two
// significant digits), a boolean or a null one byte, a map or a list three
// bytes and one per element besides its elements.
package itemsize

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
