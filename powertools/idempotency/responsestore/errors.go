package responsestore

import (
	"fmt"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// ResponseError is what the store returns, from a write, when a response
// could not be encrypted (Op "encrypt") or offloaded to S3 (Op
// "offload"), after the SDK's own retries. Nothing was stored.
//
// It matches [idempotency.ErrUnstorableResponse] as well as its cause:
// the response cannot be stored as the options require, and the
// middleware then completes the record without it, as it does with any
// response too large to store. The handler's effect is thus recorded, duplicates get a
// [*idempotency.ResponseNotStoredError], and the handler does not run
// again, rather than the record staying INPROGRESS until its lease ends
// and a duplicate running the handler a second time. A response is never
// stored in the clear because encryption failed.
type ResponseError struct {
	Key string
	Op  string
	Err error
}

func (e *ResponseError) Error() string {
	return fmt.Sprintf("responsestore: could not %s the response of %q, so it is not stored: %v", e.Op, e.Key, e.Err)
}

// Unwrap returns the cause and [idempotency.ErrUnstorableResponse].
func (e *ResponseError) Unwrap() []error { return []error{e.Err, idempotency.ErrUnstorableResponse} }

// NotStoredReason is what the record keeps, and what duplicates'
// [idempotency.ResponseNotStoredError] says, as why the response was not
// stored: "could not be encrypted", or "could not be offloaded to S3".
// Not the cause itself, which may name the key, the bucket or the
// account, and is logged instead.
func (e *ResponseError) NotStoredReason() string {
	if e.Op == "offload" {
		return "could not be offloaded to S3"
	}
	return "could not be encrypted"
}

// corrupted is the error for a record whose response cannot be read back.
func corrupted(key, format string, args ...any) error {
	return &idempotency.CorruptedRecordError{Key: key, Reason: "responsestore: " + fmt.Sprintf(format, args...)}
}
