package redis

import (
	"fmt"
	"time"

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

// DefaultWaitTimeout is [Options.WaitTimeout] unless an option changes it:
// replication within a region takes milliseconds, and a step that waits
// longer is more likely cut off by the invocation's deadline than
// replicated.
const DefaultWaitTimeout = 500 * time.Millisecond

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

	// WaitReplicas makes each step wait until that many replicas have
	// its write, with WAIT numreplicas WaitTimeout sent after the step's
	// script on the same connection: the answer of a write that has not
	// reached them is an error, and the step fails as on any store error
	// (Acquire before the handler runs; the middleware retries a
	// Complete). A step that reads a record (a duplicate's Acquire, Get)
	// writes it again unchanged and waits the same way, so that no
	// duplicate is answered from a record the replicas do not have yet.
	// Redis and Valkey replicate asynchronously: without it, a failover
	// can lose the last records written, and an effect runs twice
	// (docs/redis.md has the simulator's schedules). It costs the
	// replication's time on every step. WAIT does not make a write
	// durable by itself: what it buys depends on the failover promoting a
	// replica that had acknowledged (Sentinel and ElastiCache promote the
	// most up to date one). Must not be negative. Default 0: no WAIT.
	WaitReplicas int

	// WaitTimeout bounds each wait of WaitReplicas. Must be positive when
	// WaitReplicas is set. Default [DefaultWaitTimeout].
	WaitTimeout time.Duration

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
		WaitTimeout:   DefaultWaitTimeout,
	}
	for _, fn := range optFns {
		fn(&o)
	}
	if o.MaxRecordSize <= 0 {
		return o, &idempotency.ConfigError{Name: "redis.Options.MaxRecordSize", Err: fmt.Errorf("%d: must be positive", o.MaxRecordSize)}
	}
	if o.WaitReplicas < 0 {
		return o, &idempotency.ConfigError{Name: "redis.Options.WaitReplicas", Err: fmt.Errorf("%d: must not be negative", o.WaitReplicas)}
	}
	if o.WaitReplicas > 0 && o.WaitTimeout <= 0 {
		return o, &idempotency.ConfigError{Name: "redis.Options.WaitTimeout", Err: fmt.Errorf("%v: must be positive", o.WaitTimeout)}
	}
	if o.ScanCount <= 0 {
		return o, &idempotency.ConfigError{Name: "redis.Options.ScanCount", Err: fmt.Errorf("%d: must be positive", o.ScanCount)}
	}
	return o, nil
}
