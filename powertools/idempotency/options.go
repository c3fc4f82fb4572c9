package idempotency

import (
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"reflect"
	"time"

	"github.com/gopowertools/lambda/jmespath"
)

// Option configures [Wrap], [New] and [WrapFunc]. Options are checked
// when the wrapper is built, so a bad setting fails at cold start, never in
// the middle of an invocation.
//
// Each setting is one option, and the environment variables spell some of
// them (docs/configuration.md lists them). They apply in one order, each
// overriding the ones before: the built-in default, then the options given
// to [WithDefaults], then the environment, then the options given
// outright. A variable that an option given outright overrides is not
// checked.
type Option func(*options)

// WithDefaults gives options that the function's environment overrides:
// the key expression in code, say, for local runs and tests, which
// template.yaml may set per function in production, or metrics that a
// template may switch off. Options given outright override them too.
//
// A function wrapper does not read the variables that describe the event
// (the key and validation expressions, the key prefix, the Python
// handler, POWERTOOLS_IDEMPOTENCY_METRICS and
// POWERTOOLS_IDEMPOTENCY_LOG_OUTCOME): its defaults for them apply as
// given.
func WithDefaults(opts ...Option) Option {
	opts = append([]Option(nil), opts...)
	return func(o *options) { o.defaults = append(o.defaults, opts...) }
}

// WithEnvironment makes the wrapper read its environment variables from
// vars alone, not from the process: for a tool that builds a function's
// handler as its template configures it, and for tests of that
// configuration. Given in [WithDefaults] too, it applies; given outright,
// it wins.
//
// Default: the process environment.
func WithEnvironment(vars map[string]string) Option {
	vars = maps.Clone(vars)
	if vars == nil {
		vars = map[string]string{}
	}
	return func(o *options) { o.env = vars; o.set("WithEnvironment") }
}

// WithEventKey sets the JMESPath expression that selects the idempotency key
// from the event, for example `powertools_json(body).order_id` for an API
// Gateway request. The empty string selects the whole event. An expression
// that fails on an event (powertools_json on a body that is not JSON, say)
// refuses it with an [*InvalidEventError]; one that selects nothing is no
// key: see [WithKeyRequired].
//
// Default: POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH for a handler, else the
// whole event; for [WrapFunc], the whole argument.
func WithEventKey(expr string) Option {
	return func(o *options) { o.eventKey = expr; o.set("WithEventKey") }
}

// WithPayloadValidation sets a JMESPath expression whose value must be the
// same in every event that shares a key: a duplicate whose value differs
// gets a [*PayloadConflictError] instead of the stored response, because it
// is a different request reusing a key, not a retry. The empty string turns
// validation off.
//
// Default: POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH for a handler,
// else no validation.
func WithPayloadValidation(expr string) Option {
	return func(o *options) { o.validation = expr; o.set("WithPayloadValidation") }
}

// WithKeyPrefix sets the part of the key before "#". Functions that share a
// table need distinct prefixes, or one function would replay another's
// responses. An empty prefix is a [*ConfigError]. Not accepted by
// [WrapFunc], whose prefix is the Lambda function's name and its own.
//
// Default: POWERTOOLS_IDEMPOTENCY_KEY_PREFIX, else AWS_LAMBDA_FUNCTION_NAME
// (in PowertoolsPython mode, "<function>.<handler>": see
// [WithPythonHandler]); building a handler with none of them (as in a unit
// test) is a [*ConfigError], rather than a silent shared default. Given in
// [WithDefaults], it gives way to all of them, the function's name
// included: on Lambda, where the name is always set, the key is the one
// the function's environment describes.
func WithKeyPrefix(prefix string) Option {
	return func(o *options) { o.keyPrefix = prefix; o.set("WithKeyPrefix") }
}

// WithKeyRequired sets what happens when the event key expression selects
// nothing (null, "", [], {}, an array holding a null, or a multi-select
// hash such as {c: customer_id, o: order_id} holding one): with true, the
// invocation fails with a [*MissingKeyError] and the handler does not run.
//
// Default: false: the handler runs without idempotency and a warning is
// logged, as in Powertools for AWS Lambda.
func WithKeyRequired(required bool) Option {
	return func(o *options) { o.keyRequired = required; o.set("WithKeyRequired") }
}

// WithExpiresAfter sets how long a completed response is replayed, counted
// from the end of the handler; it also bounds how long an INPROGRESS record
// can block its key. It must be at least a second, the precision at which
// stores keep expiry.
//
// Default: POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER, else one hour.
func WithExpiresAfter(d time.Duration) Option {
	return func(o *options) { o.expiresAfter = d; o.set("WithExpiresAfter") }
}

// WithLease sets how long an invocation holds its key when its context has
// no deadline. Under Lambda the context deadline is the invocation's
// timeout and is used instead, so that a crashed invocation frees its key as
// soon as Lambda has given up on it. A context without a deadline makes the
// Handler log one warning, since a lease that ends before the handler does
// lets a duplicate run concurrently. It must be positive.
//
// Default: one minute.
func WithLease(d time.Duration) Option {
	return func(o *options) { o.lease = d; o.set("WithLease") }
}

// WithLocalCache keeps up to size COMPLETED records in memory, so that a
// duplicate seen by the same execution environment is answered without a
// store call. Entries expire with their records and are checked against
// payload validation like a stored record. Zero turns the cache off; a
// negative size is a [*ConfigError].
//
// Default: off.
func WithLocalCache(size int) Option {
	return func(o *options) { o.cacheSize = size; o.set("WithLocalCache") }
}

// WithReplayHook sets a function that makes the response of each replay
// from the stored one, as Powertools' response_hook does: it gets the
// stored response decoded into out, and the record (to read, not to
// change), and the caller gets what it returns, or its error. Add a header
// that marks an API response as replayed, say, or count duplicates and
// return out as it is. The stored response is left as it was, so every
// replay, from the store or from the local cache, starts from it. The hook
// is not called on a first call, nor for errors such as [*InProgressError]
// or [*ResponseNotStoredError].
//
// Out must be the wrapped function's result type, or building the wrapper
// fails with a [*ConfigError]. A stored response that does not decode into
// Out is a [*CorruptedRecordError].
//
// Default: none: the stored response is returned as it is.
func WithReplayHook[Out any](hook func(ctx context.Context, out Out, rec *Record) (Out, error)) Option {
	return func(o *options) {
		if hook == nil {
			o.replayHook, o.replayOut = nil, nil
			return
		}
		o.set("WithReplayHook")
		o.replayOut = reflect.TypeFor[Out]()
		o.replayHook = func(ctx context.Context, rec *Record) ([]byte, error) {
			var out Out
			if err := json.Unmarshal(rec.Response, &out); err != nil {
				return nil, &CorruptedRecordError{Key: rec.Key, Reason: fmt.Sprintf("the stored response does not decode into %T: %v", out, err)}
			}
			out, err := hook(ctx, out, rec)
			if err != nil {
				return nil, err
			}
			resp, err := encode(out)
			return resp, unwrapEncode(err)
		}
	}
}

// WithClock sets the clock used for expiry and leases, for tests. Nil
// restores the default.
//
// Default: time.Now.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.clock = now; o.set("WithClock") }
}

// WithLogger sets where warnings and errors go. Unless [WithOutcomeLog] is
// on, the package logs nothing on the normal path: only warnings (a missing
// key, a context without a deadline, a response too large to store) and
// errors (a lost lease, a store failure after the handler succeeded). To
// silence it, pass
// slog.New(slog.DiscardHandler). Nil restores the default.
//
// Default: slog.Default(), looked up when logging, so that a logger set with
// slog.SetDefault after the wrapper was built is used.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l; o.set("WithLogger") }
}

// WithJMESPathFunctions makes fns callable from the key and payload
// validation expressions, whether given in code or in the environment, next
// to JMESPath's and Powertools' own functions (see
// github.com/gopowertools/lambda/jmespath.WithFunctions; one with the name
// of a built-in function replaces it). A function that decodes text
// itself, as powertools_json does, must read it as the handler will, or the
// key can read another request than the handler (docs/security.md).
// Functions are given their arguments decoded; what they return is hashed
// as the JSON encoding/json writes for it, and refused, as every format
// would write it as U+FFFD, when it holds text that is not UTF-8.
//
// A malformed function, or an expression calling one that is not given,
// fails the build with a [*ConfigError].
//
// Default: none.
func WithJMESPathFunctions(fns ...jmespath.Function) Option {
	fns = append([]jmespath.Function(nil), fns...)
	return func(o *options) { o.functions = fns; o.set("WithJMESPathFunctions") }
}

// WithDecodeLimit sets, in bytes, an invocation's decoding budget: all
// that the key and payload validation expressions decode in it, together
// (base64 and gzip output, JSON held in strings, the values they select,
// projections over many records, multi-selects), each counted as it is
// made at the memory it takes. A request that needs more is refused with
// an [*InvalidEventError] before any store call; decompression stops
// where the budget ends, so that a small compressed record cannot make an
// invocation allocate without end. What an invocation's reading of its
// request allocates, its key and payload hash included, stays under three
// times the limit (docs/security.md). A key or validation on the whole
// event decodes all of it, at 2.5 to 6 times its size for AWS's events:
// past a few MB of small values, key on a path or raise the limit. A
// limit that is not above 0 is a [*ConfigError].
//
// Default: the limit of github.com/gopowertools/lambda/jmespath.WithDecodeLimit,
// 16 MiB, which holds every payload AWS delivers read through a path to it.
func WithDecodeLimit(n int) Option {
	return func(o *options) { o.decodeLimit = n; o.set("WithDecodeLimit") }
}

// WithUseNumber decodes the numbers of the event into an interface{} as
// json.Number, not float64, where the handler's In has interface{} fields,
// as aws-lambda-go's lambda.WithUseNumber does. The middleware decodes the
// event for the handler itself, so that option of lambda.Start's does not
// reach it: give this one. The key search reads numbers as written either
// way.
//
// Default: false, float64 as json.Unmarshal decodes.
func WithUseNumber(useNumber bool) Option {
	return func(o *options) { o.useNumber = useNumber; o.set("WithUseNumber") }
}

// WithDisallowUnknownFields makes an event with a member that the
// handler's In has no field for an error of the decoding, before the
// handler runs (the key is then released, as after any handler error), as
// aws-lambda-go's lambda.WithDisallowUnknownFields does for its own
// decoding, which does not reach a wrapped handler.
//
// Default: false: unknown members are ignored.
func WithDisallowUnknownFields(disallow bool) Option {
	return func(o *options) { o.disallowUnknown = disallow; o.set("WithDisallowUnknownFields") }
}

// WithDisabled turns idempotency off: the handler runs directly, with no
// store calls, as when testing locally.
//
// Idempotency switched off logs a warning once per process, unless
// POWERTOOLS_DEV is true.
//
// Default: POWERTOOLS_IDEMPOTENCY_DISABLED (1, t, true, y, yes or on, in
// any case, turns it off), else enabled.
func WithDisabled(disabled bool) Option {
	return func(o *options) { o.disabled = disabled; o.set("WithDisabled") }
}

// WithAbandonPolicy sets what becomes of a key whose invocation ended
// without completing or releasing it: see [AbandonPolicy].
//
// Under [AbandonBlock] and [AbandonUncertain] the INPROGRESS record's
// lease lasts until it expires, so that no store hands the key over, and
// the record keeps the invocation's deadline ([Record.Deadline]) to tell a
// holder that is running from one that is gone. A record is taken for
// abandoned [AbandonGrace] after that deadline: Lambda has stopped the
// invocation by then, and a write it sent just before has landed.
//
// Default: POWERTOOLS_IDEMPOTENCY_ABANDON_POLICY (retry, block or
// uncertain), else [AbandonRetry].
func WithAbandonPolicy(p AbandonPolicy) Option {
	return func(o *options) { o.abandon = p; o.set("WithAbandonPolicy") }
}

// WithWaitForInProgress makes a duplicate that meets a live INPROGRESS
// record wait for it instead of failing at once with an
// [*InProgressError]: it reads the record again, with a consistent read,
// after 50 ms, then after twice as long each time (give or take a quarter,
// so that duplicates spread out), so a wait of N seconds makes about
// log2(20N) reads. When the first invocation completes, the duplicate
// returns its stored response; when it fails (its record released) or its
// lease ends, the duplicate takes the key and runs the handler itself.
// The wait never goes past the duplicate's own deadline less a second
// (without a deadline, the [WithLease] duration): then it returns the
// [*InProgressError], with the holder's lease end.
//
// An API client that retries a slow request gets its response instead of
// an error, and an SQS duplicate in the same batch is not sent back to the
// queue. The wait costs the duplicate's running time: keep it off for
// functions whose duplicates come long after the first.
//
// Default: POWERTOOLS_IDEMPOTENCY_WAIT_FOR_IN_PROGRESS (a boolean), else
// false.
func WithWaitForInProgress(wait bool) Option {
	return func(o *options) { o.wait = wait; o.set("WithWaitForInProgress") }
}

// WithLeaseBeyondDeadline makes an invocation's lease last d past its
// deadline, for a handler that hands its effect to something that can
// finish after the invocation has ended: a duplicate meanwhile gets an
// [*InProgressError] (or waits) instead of running the effect again. The
// price: a key whose invocation crashed stays blocked d longer, and under
// [AbandonBlock] and [AbandonUncertain] the invocation counts as abandoned
// only [AbandonGrace] after its deadline plus d. It must not be negative.
//
// Default: POWERTOOLS_IDEMPOTENCY_LEASE_BEYOND_DEADLINE (a Go duration),
// else 0.
func WithLeaseBeyondDeadline(d time.Duration) Option {
	return func(o *options) { o.leaseBeyond = d; o.set("WithLeaseBeyondDeadline") }
}

// WithReconcile sets how an UNCERTAIN key (see [Uncertain]) is resolved:
// the next duplicate takes the record over under a lease, so that two
// invocations never reconcile one key at once, and calls fn with the key.
// fn asks the downstream, by that key (the one the handler passed on, from
// [KeyFromContext]), what happened:
//
//   - it happened: return its result and true. The record becomes COMPLETED
//     with that result, encoded as the handler's would be, and the
//     duplicate gets it; the handler does not run.
//   - it did not: return false. The handler runs, once, under the same
//     lease, as on a first call.
//   - it cannot tell: return an error. The record stays UNCERTAIN and the
//     duplicate gets an [*UncertainError] wrapping the error.
//
// Out must be the wrapped handler's (or function's) Out; otherwise
// building the wrapper fails with a [*ConfigError], rather than every duplicate failing to decode the
// reconciled result for the whole expiry window. (Go cannot check the type
// when the code compiles: an option does not know the handler's types.)
//
// Default: none: an UNCERTAIN key is resolved by an operator, who deletes
// the record (the next duplicate runs the handler) once the downstream
// says the effect did not happen, or lets it expire.
func WithReconcile[Out any](fn func(ctx context.Context, key string) (result Out, happened bool, err error)) Option {
	return func(o *options) {
		if fn == nil {
			o.reconcile, o.reconcileOut = nil, nil
			return
		}
		o.set("WithReconcile")
		o.reconcileOut = reflect.TypeFor[Out]()
		o.reconcile = func(ctx context.Context, key string) ([]byte, bool, error) {
			out, happened, err := fn(ctx, key)
			if err != nil || !happened {
				return nil, false, err
			}
			resp, err := encode(out)
			return resp, true, unwrapEncode(err)
		}
	}
}

// WithCompatibility makes the wrapper's keys and records those of a
// Powertools for AWS Lambda runtime: [PowertoolsPython] or
// [PowertoolsTypeScript]. Give the Go function the key expression, the
// payload validation expression, the hash (see [WithHash]), the key prefix
// and the table layout of the Powertools function whose records it
// shares. A value other than the three constants is a [*ConfigError].
//
// Default: POWERTOOLS_IDEMPOTENCY_COMPATIBILITY (own, python or typescript,
// in any case), else [OwnFormat].
func WithCompatibility(c Compatibility) Option {
	return func(o *options) { o.compat = c; o.set("WithCompatibility") }
}

// WithHash sets the hash of keys and payload hashes: crypto.MD5,
// crypto.SHA1, crypto.SHA224, crypto.SHA256, crypto.SHA384 or
// crypto.SHA512; another is a [*ConfigError]. In a compatibility mode, give
// the hash the Powertools function was given (hash_function in Python,
// hashFunction in TypeScript).
//
// Default: POWERTOOLS_IDEMPOTENCY_HASH_FUNCTION (md5, sha1, sha224, sha256,
// sha384 or sha512, as hashlib and Node's crypto name them), else SHA-256
// in [OwnFormat] and MD5, Powertools' default, in its modes.
func WithHash(h crypto.Hash) Option {
	return func(o *options) { o.hash = h; o.set("WithHash") }
}

// WithPythonHandler gives, in [PowertoolsPython] mode, the module and
// name of the Python handler whose records the Go handler shares, as
// Python writes them (its __module__ and __qualname__): "app.lambda_handler"
// for a handler setting of app.lambda_handler, "src.app.lambda_handler"
// for src/app.lambda_handler. Powertools Python's key prefix is
// "<function>.<handler>", the value of AWS_LAMBDA_FUNCTION_NAME, a dot and
// this name, unless its key_prefix is set: then give that prefix with
// [WithKeyPrefix] (or POWERTOOLS_IDEMPOTENCY_KEY_PREFIX) instead, which
// wins. A [PowertoolsPython] handler with neither, and WithPythonHandler
// given outright in another mode, are [*ConfigError]s (given in
// [WithDefaults], it is ignored there). Not accepted by [WrapFunc], whose
// prefix, "<function>.<name>", is already Python's: name it with the
// Python function's "<module>.<qualname>".
//
// Default: POWERTOOLS_IDEMPOTENCY_PYTHON_HANDLER for a handler in
// [PowertoolsPython] mode.
func WithPythonHandler(name string) Option {
	return func(o *options) { o.pythonHandler = name; o.set("WithPythonHandler") }
}

// WithObserver sets a function told the outcome of every invocation, after
// it ends and before its result is returned: a place for metrics and logs
// that the middleware should not decide on. It runs on the invocation's
// goroutine, so it should be quick; it cannot change the result. A
// disabled wrapper (see [WithDisabled]) tells it nothing. The built-in
// metrics and log ([WithMetrics], [WithOutcomeLog]) are told first.
//
// Default: none.
func WithObserver(fn func(ctx context.Context, o Observation)) Option {
	return func(o *options) { o.observer = fn; o.set("WithObserver") }
}

// WithMetrics writes to w, after each invocation, one CloudWatch embedded
// metric format (EMF) document: a line of JSON, written with one Write
// call, from which CloudWatch Logs makes metrics when w is the function's
// standard output. The document counts the invocation under its outcome
// (IdempotencyNew, IdempotencyReplayed, IdempotencyInProgress, ...: one
// metric per [Outcome], see docs/operations.md) and gives, in
// milliseconds, its time in the middleware, the handler's included
// (IdempotencyInvocationDuration), the handler's own time when it ran
// (IdempotencyHandlerDuration), and for a replay the age of the replayed
// response (IdempotencyReplayAge). Its dimensions are FunctionName
// (AWS_LAMBDA_FUNCTION_NAME, left out when unset) and KeyPrefix; never the
// key, each of whose values would be a metric of its own. Its namespace is
// [WithMetricsNamespace]'s.
//
// Writes to w are made one at a time, so w need not be safe for concurrent
// use; a failed write is logged as a warning. A function wrapper writes a
// document per call. nil turns metrics off.
//
// Default: for a handler, os.Stdout when POWERTOOLS_IDEMPOTENCY_METRICS is
// true (1, t, true, y, yes or on, in any case); off when it is false or
// unset, or when POWERTOOLS_METRICS_DISABLED, Powertools' switch for all
// its metrics, is true. Only the option given outright wins over
// POWERTOOLS_METRICS_DISABLED.
func WithMetrics(w io.Writer) Option {
	return func(o *options) { o.metrics = w; o.set("WithMetrics") }
}

// WithMetricsNamespace sets the CloudWatch namespace of the metrics of
// [WithMetrics]: 1 to 255 letters, digits, spaces and . - _ / # :, not
// starting with "AWS/". Another is a [*ConfigError] when metrics are on.
//
// Default: POWERTOOLS_METRICS_NAMESPACE, the namespace of the Metrics
// utility of Powertools for AWS Lambda, else "default_namespace", as in its
// TypeScript version.
func WithMetricsNamespace(namespace string) Option {
	return func(o *options) { o.namespace = namespace; o.set("WithMetricsNamespace") }
}

// WithOutcomeLog logs, with the wrapper's logger ([WithLogger]), one record
// per invocation that says how it ended, with the message
// "idempotency: invocation" and the attributes outcome (an [Outcome]),
// key_prefix, key (when there was one), duration (the time in the
// middleware, the handler's included), replay_age (for a replay whose
// record says when it was stored) and error (the caller's, when there was
// one). The level is info for an invocation without an error, error for
// OutcomeLeaseLost, OutcomeAbandoned and OutcomeStoreError, which need an
// operator, and warn for the others.
//
// The key is logged because it is how an operator finds the record; the
// package logs it already with its warnings and errors. It is the prefix
// and a SHA-256 hash of the selected value, not the value itself, but a
// value with few possibilities (an e-mail address, a card's last four
// digits) can be found from its hash by trying them: treat it as a
// pseudonym, as the table's own records are.
//
// Default: for a handler, POWERTOOLS_IDEMPOTENCY_LOG_OUTCOME (1, t, true,
// y, yes or on, in any case, turns it on), else off.
func WithOutcomeLog(on bool) Option {
	return func(o *options) { o.outcomeLog = on; o.set("WithOutcomeLog") }
}
