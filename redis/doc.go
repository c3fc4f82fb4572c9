// Package redis keeps idempotency records in Redis or Valkey, as package
// dynamo beside it does in DynamoDB, and takes options the same way (a
// func(*Options), as the AWS SDK's clients do). [Store]
// implements [idempotency.Store] with one server-side Lua script per
// operation, through a go-redis client
// (github.com/redis/go-redis/v9): a standalone server, a Redis Cluster
// (ElastiCache with cluster mode on, ElastiCache Serverless, MemoryDB) or a
// primary that Sentinel watches. docs/redis.md in the repository is the
// guide: construction, TLS and AUTH on ElastiCache, server settings, and
// what a failover costs.
//
// # What is stored
//
// One hash per record, at the key [Options.KeyPrefix] followed by the
// idempotency key ("idempotency:" + "orders#3a7b…"), with the fields
//
//	status                  INPROGRESS, COMPLETED or UNCERTAIN
//	expiration              Record.Expiry, in epoch seconds
//	in_progress_expiration  Record.LeaseEnd, in epoch milliseconds
//	invocation_deadline     Record.Deadline, in epoch milliseconds
//	lease_token             Record.LeaseToken
//	validation              Record.PayloadHash
//	data                    Record.Response, its bytes as they are
//	response_omitted        "1" when Record.ResponseOmitted
//	response_omitted_reason Record.ResponseOmittedReason
//	completed_at            Record.CompletedAt, in epoch milliseconds
//
// A field whose value is zero or empty is left out. The names and units
// are Powertools for AWS Lambda's, but its Python Redis layer keeps a
// record as one JSON string, which this store reports as corrupted rather
// than reads: the two do not share records. Each script touches only the
// record's key, so the store needs no hash tags on a cluster.
//
// # Expiry, leases and clocks
//
// Whether a record is live ([idempotency.Record.Live]) is judged on the
// caller's clock, as the DynamoDB and in-memory stores judge it: Acquire
// sends its now to the script, which compares it with the stored
// expiration and in_progress_expiration. The lease ends at the Lambda
// invocation's deadline, a time on the function's clock, and the server's
// clock would move it by the clocks' difference; and one rule for every
// store lets the conformance suite, and tests with
// [idempotency.WithClock], move time for all of them alike.
//
// The server's clock decides only when a record is deleted: every write
// sets the key's TTL to the time left until the record's Expiry, counted on
// the writer's clock (from Acquire's now, or from this process's clock for
// Complete and Reclaim), plus one minute. A relative TTL makes an offset
// between the clocks irrelevant, and the minute covers the write's time in
// flight, so the server deletes a record only after its writer counts it
// expired; until then Acquire takes over an expired record itself. The
// lease is not a TTL: a handler that finishes after its lease ended, when
// no other invocation took the key over, still completes its record.
//
// # Commands
//
// Each method is one EVALSHA, a round trip:
//
//   - [Store.Acquire] returns the live record of the key, or writes rec
//     when there is none; a record whose status or times cannot be read is
//     returned, never written over.
//   - [Store.Complete] replaces the record when it carries rec's lease
//     token.
//   - [Store.Release] deletes the record when it carries the token.
//   - [Store.Reclaim] replaces an UNCERTAIN record that carries the token
//     read.
//   - [Store.Get] reads the record (HGETALL, in a script so that it reaches
//     the primary).
//
// An operator's tool (cmd/idempotency) has two more, which the middleware
// never sends: [Store.Scan] reads every record, with SCAN over the key
// prefix on each primary and HGETALL, and [Store.Delete] deletes a record
// if it still has the status and lease token it was seen with, with one
// script.
//
// A server that does not hold a script yet (the first call after it
// started, or after a failover) answers NOSCRIPT, and the client sends the
// script with EVAL: one more round trip, once per script and server. An
// invocation of the middleware then costs: a new key 2 round trips
// (Acquire, Complete), a duplicate 1, a replay from
// [idempotency.WithLocalCache] 0, a handler error 2 (Acquire, Release).
//
// go-redis sends a command again when its connection broke before the
// reply came (MaxRetries, or a cluster client's MaxRedirects: 3 by
// default), and every script is safe to run twice: a retried Acquire
// finds the invocation's own INPROGRESS record, which the middleware
// recognises by its lease token; a retried Complete rewrites the same
// record; a retried Release finds nothing to delete; a retried Reclaim
// finds its own new token.
//
// # Deadlines
//
// Each command ends 500 ms before the deadline of the context it is given,
// the invocation's: a server that does not answer by then (hung, stopped,
// cut off) gives an error while the invocation can still answer, which
// the middleware returns as a [*idempotency.PersistenceError], rather than
// holding the invocation until Lambda ends it as timed out. go-redis ends
// a command with its context only when the client's ContextTimeoutEnabled
// is on, as [ClientFromEnv] and [ClusterClientFromEnv] set it; otherwise
// its ReadTimeout and WriteTimeout (5 s by default) bound each attempt.
// The middleware's writes after the handler (Complete, Release) are given
// a context without a deadline, so that the handler's effect is recorded
// even when its context ends: only go-redis's timeouts bound them.
//
// # Errors
//
// A failed token condition gives [idempotency.ErrLeaseLost]; a record over
// [Options.MaxRecordSize] gives [idempotency.ErrRecordTooLarge] before any
// command, and nothing is stored; a hash that cannot be read, or a key that
// holds another type than a hash, gives a
// [*idempotency.CorruptedRecordError]. Every other failure is go-redis's
// error, wrapped with the operation and the key.
//
// # Server settings
//
// maxmemory-policy must be noeviction: every record has a TTL, so the
// volatile-* policies (ElastiCache's default is volatile-lru) evict
// records when memory runs short, and the duplicates of an evicted key run
// their handler again. Replication is asynchronous: a write acknowledged by
// a primary that fails before its replica got it is lost (docs/redis.md).
//
// # Environment
//
// [ClientFromEnv] and [ClusterClientFromEnv] make a client for the URL in
// REDIS_URL ([URLEnv]).
//
// A Store must be made with [New], which sends no command: the store
// asks the server once, on its first use, whether the client fits it, and
// refuses a client of the wrong kind, with credentials the server
// refuses, or whose ACL user lacks a command of the store. It is safe for concurrent use and starts no
// goroutine; the client, its connection pool and its lifetime are the
// caller's.
package redis
