package redisstore

import (
	"fmt"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// DefaultMaxRecordSize is the largest record a [Store] writes unless
// [Options.MaxRecordSize] changes it: 400 KiB, the DynamoDB store's item
// limit, so that a function moved from one store to the other keeps, and
// refuses, the same responses. Redis itself takes values of up to 512 MB,
// but every record lives in memory, where under noeviction a full server
// refuses every write, and a large value holds the single-threaded server
// while it is copied in and out.
const DefaultMaxRecordSize = 400 * 1024

// DefaultKeyPrefix is [Options.KeyPrefix] unless an option changes it.
const DefaultKeyPrefix = "idempotency:"

// DefaultScanCount is [Options.ScanCount] unless an option changes it.
const DefaultScanCount = 100

// Options configure a [Store]. The defaults are set before the option
// functions run, so a function sees and may change them.
type Options struct {
	// KeyPrefix comes before every idempotency key to make the record's
	// Redis key: "idempotency:" and "orders#3a7b…" give the key
	// "idempotency:orders#3a7b…". It keeps the records apart from other
	// data on the server, and lets an ACL user be limited to them
	// (~idempotency:*). It may be "". A prefix holding a hash tag ({…})
	// puts every record of a cluster in one slot, on one node. Default
	// [DefaultKeyPrefix], "idempotency:".
	KeyPrefix string

	// MaxRecordSize is the largest record written, in bytes: the Redis
	// key, and each field's name and value. A larger record gives
	// [idempotency.ErrRecordTooLarge] before any command is sent, and the
	// middleware then completes the record without its response.
	// Must be positive. Default [DefaultMaxRecordSize].
	MaxRecordSize int

	// ScanCount is the COUNT of each SCAN that [Store.Scan] sends, which
	// the middleware never does: about how many keys of the server's key
	// table one SCAN looks at, of which it returns those with KeyPrefix.
	// Larger, a scan takes fewer round trips, and each holds the
	// single-threaded server a little longer, and reads more records at
	// once (up to MaxRecordSize each). Must be positive. Default
	// [DefaultScanCount].
	ScanCount int
}

// options returns the defaults, changed by optFns, or a
// [*idempotency.ConfigError] naming the first bad field.
func options(optFns []func(*Options)) (Options, error) {
	o := Options{
		KeyPrefix:     DefaultKeyPrefix,
		MaxRecordSize: DefaultMaxRecordSize,
		ScanCount:     DefaultScanCount,
	}
	for _, fn := range optFns {
		fn(&o)
	}
	if o.MaxRecordSize <= 0 {
		return o, &idempotency.ConfigError{Name: "redisstore.Options.MaxRecordSize", Err: fmt.Errorf("%d: must be positive", o.MaxRecordSize)}
	}
	if o.ScanCount <= 0 {
		return o, &idempotency.ConfigError{Name: "redisstore.Options.ScanCount", Err: fmt.Errorf("%d: must be positive", o.ScanCount)}
	}
	return o, nil
}
