// Package adapters holds what package idempotency offers the adapters of
// this module (httpapi), and not their users. Package idempotency sets
// each.
package adapters

// FormerValidation returns the idempotency.Option of an adapter whose
// default payload validation expression, validation, replaced former:
// while validation is the one in effect, a stored record whose payload
// hash is the hash of what former selects in the event is a match, so
// that a retry in flight across the deploy that changed the default is
// answered from its record, not refused as another payload. The texts
// that the two expressions hash must never be equal for two events (a
// list for validation, a string for former, say), or requests that
// validation tells apart would match one record. Package idempotency
// sets it.
var FormerValidation func(validation, former string) any

// Answer returns, for err, the HTTP status and problem code of the row
// that the middleware's table of errors has for an error in err's tree,
// and that error, cause; a zero status when the adapter answers err with
// nothing of its own (the handler's error, or one the table gives no
// answer).
var Answer func(err error) (status int, problem string, cause error)

// DecodeResponse decodes data, the stored response of the record key,
// into what v points to, or returns the *idempotency.CorruptedRecordError
// that a replay of a response that does not decode gets.
var DecodeResponse func(key string, data []byte, v any) error
