// Package idempotency makes AWS Lambda handlers, and functions inside them,
// idempotent: an event delivered twice runs the handler once, and the
// duplicate gets the first invocation's response.
//
// [Wrap] turns a typed handler into a [*Handler] for lambda.Start ([New]
// returns its configuration error instead of panicking); [WrapFunc] wraps
// a function called from a handler, keyed on its argument. Both keep their
// records in a [Store]: github.com/gopowertools/lambda/dynamo.Store in
// DynamoDB, github.com/gopowertools/lambda/redis.Store in Redis or Valkey,
// or idempotencytest.Store in memory for tests.
//
// # How an invocation runs
//
// The idempotency key is selected from the raw event by a JMESPath
// expression ([WithEventKey]) and hashed: the key is the prefix, "#", and the
// hex SHA-256 of the selected value's canonical JSON (object keys sorted at
// every depth, no insignificant whitespace, no HTML escaping, numbers as
// written). The same event with its fields in another order has the same
// key. [WithHash] sets another hash; [WithCompatibility] makes the keys and
// records those of Powertools Python or TypeScript instead, so that a Go
// function shares a table's records with Powertools functions. A
// selection that is null, "", [], {}, an array holding a null, or a
// multi-select hash holding one (a multi-select with a path absent) is no
// key; 0 and false are keys.
//
// The key and the validated value are exactly what encoding/json gives the
// handler's struct fields on the same paths, or the request is refused.
// Every entry point ([Wrap], [New], [WrapFunc], the httpapi adapter,
// a batch's records) turns its request into JSON bytes (a function
// wrapper's argument through json.Marshal) and passes them through one
// reading, before any store call, that validates all of them and refuses
// text that could be read two ways: names that encoding/json would take
// for one, anywhere; a case variant of a name an expression looks up;
// invalid UTF-8; a request that decodes past the invocation's budget
// (jmespath.WithDecodeLimit, given to [WithJMESPath]).
// docs/security.md states the rules. Such a request, or one on which an
// expression fails (powertools_json on a body that is not JSON), gets an
// [*InvalidEventError] on every call, replays included; an expression that
// selects nothing or null is no key.
//
// The first invocation with a key writes an INPROGRESS record holding a
// lease, which ends at the context's deadline (the Lambda timeout) or after
// [WithLease] without one, and carries a lease token unique to the
// invocation (32 hex digits of crypto/rand). It then decodes the event,
// runs the handler, encodes the response once, stores it in a COMPLETED
// record that expires after [WithExpiresAfter], and returns those bytes. An invocation whose lease has
// ended cannot overwrite the record of the one that took its key over:
// completion is conditioned on the token.
//
// A duplicate of a COMPLETED record gets the stored response; the handler is
// not called and the event is not decoded into its type. A duplicate of a
// live INPROGRESS record gets an [*InProgressError]; once the lease has
// ended, the next duplicate takes the key over and runs the handler.
//
// If the handler returns an error, the record is deleted so that a retry
// runs it again, and the error is returned unchanged. If it panics, the
// record is deleted and the panic goes on with its original value. Once the
// handler has succeeded, its result is returned even if the store then
// fails: an error would make the caller retry an effect that has happened.
// Those failures are logged at error level with the key.
//
// # Errors
//
// Besides the handler's own errors, which are returned unchanged, an
// invocation returns one of the package's error types, each with the
// failure's details as fields; match them with errors.As or
// errors.AsType. docs/errors.md is their one table: when each comes,
// whether the handler ran, what becomes of the record, what a caller does.
//
// # What is stored
//
// A [Record] per key: its status, expiry, lease end and lease token, the
// encoded response (COMPLETED only), and the payload hash when validation is
// on. The event itself is never stored.
//
// # Settings
//
// Each setting is an [Option], whose doc comment gives its default, and
// some can be given by an environment variable instead, read once when
// the wrapper is built. docs/configuration.md lists them, with the one
// order in which options and variables apply (see [Option]). Metrics and
// a log line per invocation ([WithCloudWatchMetrics], [WithOutcomeLog])
// are off by default; they and [WithObserver] hear of each invocation's
// [Outcome].
//
// The module has one rule for options: the middleware and what wraps it
// (this package, httpapi, batch, responsestore) take With… functions; a
// store built on a client (github.com/gopowertools/lambda/dynamo on the
// AWS SDK's DynamoDB client, github.com/gopowertools/lambda/redis on
// go-redis) takes the client and func(*Options), as the AWS SDK's own
// clients do.
//
// # Zero values
//
// The zero [Handler] is not usable: every call returns a [*ConfigError],
// rather than panicking. A nil [Option] is ignored.
//
// # Concurrency
//
// A [*Handler] and a wrapped function are safe for concurrent use; nothing
// about an invocation outlives the call except its record and, with
// [WithLocalCache], a mutex-guarded in-memory copy of COMPLETED records. The
// package starts no goroutines: Lambda freezes the process between
// invocations, so the cache checks expiry when it is read.
package idempotency
