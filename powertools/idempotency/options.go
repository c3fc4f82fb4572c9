package idempotency

import (
	"context"
	"encoding/json"
	"fmt"
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
	return func(o *options) { o.env = vars }
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
// responses. An empty prefix is a [*ConfigError].
//
// Default: POWERTOOLS_IDEMPOTENCY_KEY_PREFIX, else AWS_LAMBDA_FUNCTION_NAME;
// building a handler with neither (as in a unit test) is a [*ConfigError],
// rather than a silent shared default. Not accepted by [WrapFunc], whose
// prefix is the Lambda function's name and its own.
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
	return func(o *options) { o.keyRequired = required }
}

// WithExpiresAfter sets how long a completed response is replayed, counted
// from the end of the handler; it also bounds how long an IN_PROGRESS record
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

// WithLocalCache keeps up to size COMPLETE records in memory, so that a
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
	return func(o *options) { o.clock = now }
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
	return func(o *options) { o.logger = l }
}

// WithJMESPathFunctions makes fns callable from the key and payload
// validation expressions, whether given in code or in the environment, next
// to JMESPath's and Powertools' own functions (see
// github.com/gopowertools/lambda/jmespath.WithFunctions; one with the name
// of a built-in function replaces it). A function that decodes text
// itself, as powertools_json does, must read it as the handler will, or the
// key can read another request than the handler (docs/security.md).
// Functions are given their arguments decoded; what they return is hashed
// as the JSON encoding/json writes for it.
//
// A malformed function, or an expression calling one that is not given,
// fails the build with a [*ConfigError].
//
// Default: none.
func WithJMESPathFunctions(fns ...jmespath.Function) Option {
	fns = append([]jmespath.Function(nil), fns...)
	return func(o *options) { o.functions = fns }
}

// WithDecodeLimit sets, in bytes, the largest output that the key and
// payload validation expressions may decode with powertools_base64 and
// powertools_base64_gzip, and the longest text they may decode with
// powertools_json; a request that needs more is refused with an
// [*InvalidEventError], and decompression stops at the limit, so that a
// small compressed record cannot make an invocation allocate without end
// (docs/security.md). A limit that is not above 0 is a [*ConfigError].
//
// Default: the limit of github.com/gopowertools/lambda/jmespath.WithDecodeLimit,
// which holds every payload AWS delivers.
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
	return func(o *options) { o.useNumber = useNumber }
}

// WithDisallowUnknownFields makes an event with a member that the
// handler's In has no field for an error of the decoding, before the
// handler runs (the key is then released, as after any handler error), as
// aws-lambda-go's lambda.WithDisallowUnknownFields does for its own
// decoding, which does not reach a wrapped handler.
//
// Default: false: unknown members are ignored.
func WithDisallowUnknownFields(disallow bool) Option {
	return func(o *options) { o.disallowUnknown = disallow }
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
