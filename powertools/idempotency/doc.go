// Package idempotency makes AWS Lambda handlers, and functions inside them,
// idempotent: an event delivered twice runs the handler once, and the
// duplicate gets the first invocation's response.
//
// [Wrap] turns a typed handler into a [*Handler] for lambda.Start ([New]
// returns its configuration error instead of panicking); [WrapFunc] wraps
// a function called from a handler, keyed on its argument. Both keep their records in a [Store]:
// github.com/gopowertools/lambda/dynamo.Store in DynamoDB, or
// idempotencytest.Store in memory for tests.
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
// invalid UTF-8; a decoded document past its limit ([WithDecodeLimit]).
// docs/security.md states the rules. Such a request, or one on which an
// expression fails (powertools_json on a body that is not JSON), gets an
// [*InvalidEventError] on every call, replays included; an expression that
// selects nothing or null is no key.
//
// The first invocation with a key writes an IN_PROGRESS record holding a
// lease, which ends at the context's deadline (the Lambda timeout) or after
// [WithLease] without one, and carries a lease token unique to the
// invocation (32 hex digits: a random half drawn once per process, and a
// counter). It then decodes the event, runs the handler, encodes the
// response once, stores it in a COMPLETE record that expires after
// [WithExpiresAfter], and returns those bytes. An invocation whose lease has
// ended cannot overwrite the record of the one that took its key over:
// completion is conditioned on the token.
//
// A duplicate of a COMPLETE record gets the stored response; the handler is
// not called and the event is not decoded into its type. A duplicate of a
// live IN_PROGRESS record gets an [*InProgressError]; once the lease has
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
// Besides the handler's own errors, an invocation can return one of the
// types below, each with the failure's details as fields; match them with
// errors.As or errors.AsType. docs/errors.md tables them: when each comes,
// whether the handler ran, what becomes of the record, whether a retry
// can succeed.
//
//   - [*InProgressError]: another invocation holds the key (and, with
//     [WithWaitForInProgress], still held it when the wait ran out).
//   - [*AbandonedError]: the invocation that held the key ended without
//     completing, and [AbandonBlock] keeps the key locked.
//   - [*PayloadConflictError]: payload validation is on
//     ([WithPayloadValidation]) and this event's validated part differs
//     from the stored one's, whether that record is COMPLETE or IN_PROGRESS.
//   - [*MissingKeyError]: the event has no key and [WithKeyRequired] is on.
//   - [*InvalidEventError]: the event is not JSON, an expression fails on
//     it, or its names could be read two ways (see docs/security.md); for
//     [WrapFunc], the argument cannot be encoded faithfully. Nothing is
//     stored; the handler is not run.
//   - [*ResponseNotStoredError]: the first invocation succeeded but its
//     response was too large to store.
//   - [*CorruptedRecordError]: the stored record cannot be read; the
//     handler is not run.
//   - [*PersistenceError]: the store failed before the handler ran (which
//     it then does not), or could not commit the handler's staged writes
//     (a [*CommitError]). It unwraps to the store's error.
//   - [*UncertainError]: an earlier invocation's handler returned an error
//     made with [Uncertain], and the outcome has not been reconciled (see
//     [WithReconcile]); the handler is not run.
//   - [*ConfigError]: from [New] (and as the panic value of [Wrap] and
//     [WrapFunc]) for an invalid option or
//     environment variable, which it names.
//
// A store that commits the handler's staged writes with the record (an
// [Invoker], such as github.com/gopowertools/lambda/dynamo.Store) and
// refuses them returns its reason, which the invocation returns as the
// handler's own error; the key is released. See docs/exactly-once.md.
//
// # What is stored
//
// A [Record] per key: its status, expiry, lease end and lease token, the
// encoded response (COMPLETE only), and the payload hash when validation is
// on. The event itself is never stored.
//
// # Environment
//
// Read once, when a wrapper is built; an option given in code wins, and an
// invalid value is a [*ConfigError] naming the variable:
//
//   - POWERTOOLS_IDEMPOTENCY_DISABLED: 1, t, true, y, yes or on (any case)
//     runs handlers directly; 0, f, false, n, no or off does not. Switched
//     off, by the variable or [WithDisabled], the package logs a warning
//     once per process unless POWERTOOLS_DEV is true.
//   - POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH: the handler's key expression.
//   - POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH: the handler's
//     payload validation expression.
//   - POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER: a Go duration, such as 1h.
//   - POWERTOOLS_IDEMPOTENCY_KEY_PREFIX: the handler's key prefix.
//   - POWERTOOLS_IDEMPOTENCY_WAIT_FOR_IN_PROGRESS: a boolean; see
//     [WithWaitForInProgress].
//   - POWERTOOLS_IDEMPOTENCY_ABANDON_POLICY: retry, block or uncertain; see
//     [WithAbandonPolicy].
//   - POWERTOOLS_IDEMPOTENCY_LEASE_BEYOND_DEADLINE: a Go duration; see
//     [WithLeaseBeyondDeadline].
//   - AWS_LAMBDA_FUNCTION_NAME: the handler's key prefix when no other is set.
//   - POWERTOOLS_IDEMPOTENCY_COMPATIBILITY: own, python or typescript (any
//     case); see [WithCompatibility].
//   - POWERTOOLS_IDEMPOTENCY_HASH_FUNCTION: md5, sha1, sha224, sha256,
//     sha384 or sha512; see [WithHash].
//   - POWERTOOLS_IDEMPOTENCY_PYTHON_HANDLER: in python mode, the Python
//     handler that the handler's key prefix names; see [WithPythonHandler].
//   - POWERTOOLS_IDEMPOTENCY_METRICS: true (the spellings above) writes a
//     handler's metrics to standard output ([WithMetrics]), unless
//     POWERTOOLS_METRICS_DISABLED is true; POWERTOOLS_METRICS_NAMESPACE
//     is their namespace ([WithMetricsNamespace]).
//   - POWERTOOLS_IDEMPOTENCY_LOG_OUTCOME: true logs a record per
//     invocation of a handler ([WithOutcomeLog]).
//
// # Metrics and logs
//
// Off by default. [WithMetrics] writes a CloudWatch embedded metric format
// document per invocation: a count of its [Outcome], its time in the
// middleware and, for a replay, the age of the response, with the function
// and key prefix as dimensions. [WithOutcomeLog] logs a record per
// invocation with the outcome and the key. Both are told before the
// function of [WithObserver], which still is. See docs/operations.md.
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
// [WithLocalCache], a mutex-guarded in-memory copy of COMPLETE records. The
// package starts no goroutines: Lambda freezes the process between
// invocations, so the cache checks expiry when it is read.
package idempotency
