package dynamo

import (
	"errors"
	"fmt"
	"os"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Environment variables read for defaults.
const (
	// TableEnv names the table when Options.TableName is not set. It is
	// this library's own variable: Powertools takes the table name in
	// code.
	TableEnv = "POWERTOOLS_IDEMPOTENCY_TABLE"
	// functionNameEnv is set by Lambda; it makes the default static
	// partition key of composite mode.
	functionNameEnv = "AWS_LAMBDA_FUNCTION_NAME"
)

// Options configure a [Store] and [CreateTable]. The defaults are set
// before the option functions run, so a function sees and may change them.
// The attribute defaults are Powertools for AWS Lambda's.
type Options struct {
	// TableName is the table. Default: the value of
	// POWERTOOLS_IDEMPOTENCY_TABLE. Required.
	TableName string

	// KeyAttr is the partition key attribute (type S). In simple mode it
	// holds the idempotency key; in composite mode, StaticPartitionKey.
	// Default "id".
	KeyAttr string
	// SortKeyAttr, when set, turns on composite mode: the table has this
	// sort key attribute (type S), which holds the idempotency key, and
	// every record shares the partition key StaticPartitionKey. Default ""
	// (simple mode).
	SortKeyAttr string
	// StaticPartitionKey is the partition key value of every record in
	// composite mode. Default "idempotency#" followed by the value of
	// AWS_LAMBDA_FUNCTION_NAME.
	StaticPartitionKey string

	// ExpiryAttr holds Record.Expiry in epoch seconds (N); the table's TTL
	// attribute. Default "expiration".
	ExpiryAttr string
	// LeaseEndAttr holds Record.LeaseEnd in epoch milliseconds (N).
	// Default "in_progress_expiration".
	LeaseEndAttr string
	// StatusAttr holds Record.Status (S). Default "status".
	StatusAttr string
	// DataAttr holds Record.Response: S when it is valid UTF-8 (JSON
	// always is), B otherwise; for an invocation in
	// idempotency.PowertoolsTypeScript mode, DynamoDB's own types, as
	// Powertools TypeScript keeps a response. Default
	// "data".
	DataAttr string
	// ValidationAttr holds Record.PayloadHash (S). Default "validation".
	ValidationAttr string
	// LeaseTokenAttr holds Record.LeaseToken (S). Default "lease_token".
	LeaseTokenAttr string
	// ResponseOmittedAttr holds Record.ResponseOmitted (BOOL), written only
	// when true. Default "response_omitted".
	ResponseOmittedAttr string
	// ResponseOmittedReasonAttr holds Record.ResponseOmittedReason (S),
	// why the response was not stored, written only when there is one.
	// Default "response_omitted_reason".
	ResponseOmittedReasonAttr string
	// CompletedAtAttr holds Record.CompletedAt in epoch milliseconds (N),
	// written on COMPLETED records. Default "completed_at".
	CompletedAtAttr string
	// DeadlineAttr holds Record.Deadline in epoch milliseconds (N),
	// written on the INPROGRESS records of functions whose lease outlasts
	// their deadline (idempotency.WithAbandonPolicy). Default
	// "invocation_deadline".
	DeadlineAttr string

	// AcceptEventualGlobalTable lets the store work on a global table in
	// multi-Region eventual consistency (MREC) with replicas in other
	// Regions, which it otherwise refuses on its first Acquire with an
	// *idempotency.ConfigError. Such a table decides each conditional
	// write on the replica of the Region that receives it, and settles
	// two Regions' writes of one record by the last writer: a duplicate
	// delivered in another Region before the record has replicated runs
	// the handler again, and a stored response can be replaced, even
	// with the handler's writes staged (a transaction is atomic in its
	// own Region only). Set it when only one Region ever writes the
	// table, or when a repeated effect is acceptable. A global table in
	// multi-Region strong consistency (MRSC) keeps the guarantee and
	// needs no option, but does not support transactions: [Stage]
	// returns [ErrNoTransactions] on it. docs/multi-region.md has the
	// simulator's schedules for each mode. Default false.
	AcceptEventualGlobalTable bool
}

// options returns the defaults, changed by optFns, or a
// [*idempotency.ConfigError] naming the first bad field.
func options(optFns []func(*Options)) (Options, error) {
	o := Options{
		TableName:                 os.Getenv(TableEnv),
		KeyAttr:                   "id",
		StaticPartitionKey:        "idempotency#" + os.Getenv(functionNameEnv),
		ExpiryAttr:                "expiration",
		LeaseEndAttr:              "in_progress_expiration",
		StatusAttr:                "status",
		DataAttr:                  "data",
		ValidationAttr:            "validation",
		LeaseTokenAttr:            "lease_token",
		ResponseOmittedAttr:       "response_omitted",
		ResponseOmittedReasonAttr: "response_omitted_reason",
		CompletedAtAttr:           "completed_at",
		DeadlineAttr:              "invocation_deadline",
	}
	for _, fn := range optFns {
		fn(&o)
	}
	if o.TableName == "" {
		return o, &idempotency.ConfigError{Name: "dynamo.Options.TableName", Err: fmt.Errorf("empty: set it or %s", TableEnv)}
	}
	if o.SortKeyAttr != "" && o.StaticPartitionKey == "" {
		return o, &idempotency.ConfigError{Name: "dynamo.Options.StaticPartitionKey", Err: errors.New("empty in composite mode (SortKeyAttr is set)")}
	}
	attrs := []struct{ name, value string }{
		{"KeyAttr", o.KeyAttr},
		{"ExpiryAttr", o.ExpiryAttr},
		{"LeaseEndAttr", o.LeaseEndAttr},
		{"StatusAttr", o.StatusAttr},
		{"DataAttr", o.DataAttr},
		{"ValidationAttr", o.ValidationAttr},
		{"LeaseTokenAttr", o.LeaseTokenAttr},
		{"ResponseOmittedAttr", o.ResponseOmittedAttr},
		{"ResponseOmittedReasonAttr", o.ResponseOmittedReasonAttr},
		{"CompletedAtAttr", o.CompletedAtAttr},
		{"DeadlineAttr", o.DeadlineAttr},
	}
	if o.SortKeyAttr != "" {
		attrs = append(attrs, struct{ name, value string }{"SortKeyAttr", o.SortKeyAttr})
	}
	seen := make(map[string]string, len(attrs))
	for _, a := range attrs {
		if a.value == "" {
			return o, &idempotency.ConfigError{Name: "dynamo.Options." + a.name, Err: errors.New("empty attribute name")}
		}
		if other, dup := seen[a.value]; dup {
			return o, &idempotency.ConfigError{Name: "dynamo.Options." + a.name, Err: fmt.Errorf("attribute %q is also %s", a.value, other)}
		}
		seen[a.value] = a.name
	}
	return o, nil
}
