package idempotency

import (
	"context"
	"crypto"
	"io"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/gopowertools/lambda/jmespath"
)

// Option configures [Wrap], [New] and [WrapFunc]. Options are checked
// when the wrapper is built, so that a bad setting fails at cold start,
// never in an invocation. Some have an environment variable; options given
// outright win over it, and it wins over [WithDefaults]
// (docs/configuration.md#precedence).
type Option func(*options)

// WithDefaults gives options that the environment overrides: a key
// expression in code for tests and local runs, say, which a template sets
// per function in production (docs/configuration.md#precedence).
func WithDefaults(opts ...Option) Option {
	opts = append([]Option(nil), opts...)
	return func(o *options) { o.defaults = append(o.defaults, opts...) }
}

// WithEnvironment makes the wrapper read its environment variables from
// vars instead of the process: to build a function's handler as its
// template configures it, in a tool, or in a test that runs in parallel.
// Default: the process environment.
func WithEnvironment(vars map[string]string) Option {
	vars = maps.Clone(vars)
	if vars == nil {
		vars = map[string]string{}
	}
	return func(o *options) { o.env = vars; o.set("WithEnvironment") }
}

// WithEventKey sets the JMESPath expression that selects the key from the
// event ("" for all of it): what every retry of one request shares, such
// as powertools_json(body).order_id (docs/configuration.md).
// Default: POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH for a handler, else
// the whole event.
func WithEventKey(expr string) Option {
	return func(o *options) { o.eventKey = expr; o.set("WithEventKey") }
}

// WithPayloadValidation sets a JMESPath expression whose value must be the
// same in every event that shares a key, so that another request reusing a
// key gets a [*PayloadConflictError], not the first one's response.
// Default: POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH for a
// handler, else no validation.
func WithPayloadValidation(expr string) Option {
	return func(o *options) { o.validation = expr; o.set("WithPayloadValidation") }
}

// WithKeyPrefix sets the part of the key before "#", so that functions
// sharing a table do not replay each other's responses. Not for [WrapFunc],
// whose prefix is its own (docs/configuration.md).
// Default: POWERTOOLS_IDEMPOTENCY_KEY_PREFIX, else AWS_LAMBDA_FUNCTION_NAME.
func WithKeyPrefix(prefix string) Option {
	return func(o *options) { o.keyPrefix = prefix; o.set("WithKeyPrefix") }
}

// WithKeyRequired makes an event whose key expression selects nothing fail
// with a [*MissingKeyError] instead of running the handler unprotected: for
// a handler that must never run twice (docs/configuration.md).
// Default: false: the handler runs and a warning is logged, as in Powertools.
func WithKeyRequired(required bool) Option {
	return func(o *options) { o.keyRequired = required; o.set("WithKeyRequired") }
}

// WithExpiresAfter sets how long a completed response is replayed, from the
// end of the handler: longer than the trigger's retries and redeliveries
// last. At least a second (docs/configuration.md).
// Default: POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER, else one hour.
func WithExpiresAfter(d time.Duration) Option {
	return func(o *options) { o.expiresAfter = d; o.set("WithExpiresAfter") }
}

// WithLease sets how long an invocation holds its key when its context has
// no deadline, as in tests and local runs; under Lambda the invocation's
// deadline ends the lease (docs/in-progress.md).
// Default: one minute.
func WithLease(d time.Duration) Option {
	return func(o *options) { o.lease = d; o.set("WithLease") }
}

// WithLocalCache keeps up to size COMPLETED records in memory, so that a
// duplicate reaching the same execution environment is answered without a
// store request (docs/configuration.md). 0 turns it off.
// Default: off.
func WithLocalCache(size int) Option {
	return func(o *options) { o.cacheSize = size; o.set("WithLocalCache") }
}

// WithReplayHook sets a function that makes each replay's response from the
// stored one, as Powertools' response_hook does: to mark an API response
// as replayed, say. Out must be the wrapped function's
// (docs/configuration.md).
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
			if err := decodeResponse(rec.Key, rec.Response, &out); err != nil {
				return nil, err
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

// WithClock sets the clock of expiry and leases, so that a test can move
// time on. Nil restores the default.
// Default: time.Now.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.clock = now; o.set("WithClock") }
}

// WithLogger sets where warnings, errors and [WithOutcomeLog]'s records go,
// to put them with the function's own logs; the normal path logs nothing
// else (docs/operations.md). Nil restores the default.
// Default: slog.Default(), looked up when logging.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l; o.set("WithLogger") }
}

// WithJMESPath compiles the key and validation expressions, from code or
// the environment, with the JMESPath engine's options, as Powertools'
// jmespath_options does: [jmespath.WithFunctions] for functions of your
// own, [jmespath.WithDecodeLimit] for the budget of what an invocation's
// reading may decode (docs/security.md).
// Default: none: JMESPath's and Powertools' functions, a 16 MiB budget.
func WithJMESPath(opts ...jmespath.Option) Option {
	opts = slices.DeleteFunc(slices.Clone(opts), func(opt jmespath.Option) bool { return opt == nil })
	return func(o *options) { o.jmespath = opts; o.set("WithJMESPath") }
}

// WithJMESPathFunctions makes fns callable from the key and validation
// expressions.
//
// Deprecated: give [jmespath.WithFunctions](fns...) to [WithJMESPath], the
// one option that passes the JMESPath engine its options.
func WithJMESPathFunctions(fns ...jmespath.Function) Option {
	fns = append([]jmespath.Function(nil), fns...)
	return func(o *options) { o.functions = fns; o.set("WithJMESPathFunctions") }
}

// WithDecodeLimit sets, in bytes, the invocation's decoding budget. A
// limit that is not above 0 is a [*ConfigError].
//
// Deprecated: give [jmespath.WithDecodeLimit](n) to [WithJMESPath], the
// one option that passes the JMESPath engine its options: an invocation's
// expressions read its request in one search, whose budget that is.
func WithDecodeLimit(n int) Option {
	return func(o *options) { o.decodeLimit = n; o.set("WithDecodeLimit") }
}

// WithUseNumber decodes the event's numbers into the handler's interface{}
// values as json.Number, as aws-lambda-go's lambda.WithUseNumber does,
// which does not reach a wrapped handler (docs/configuration.md).
// Default: false, float64 as json.Unmarshal decodes.
func WithUseNumber(useNumber bool) Option {
	return func(o *options) { o.useNumber = useNumber; o.set("WithUseNumber") }
}

// WithDisallowUnknownFields refuses, before the handler runs, an event with
// a member that In has no field for, as aws-lambda-go's
// lambda.WithDisallowUnknownFields does, which does not reach a wrapped
// handler (docs/configuration.md).
// Default: false: unknown members are ignored.
func WithDisallowUnknownFields(disallow bool) Option {
	return func(o *options) { o.disallowUnknown = disallow; o.set("WithDisallowUnknownFields") }
}

// WithDisabled turns idempotency off, for local runs without a store: the
// handler runs directly, and a warning is logged once per process unless
// POWERTOOLS_DEV is true (docs/testing.md).
// Default: POWERTOOLS_IDEMPOTENCY_DISABLED, else enabled.
func WithDisabled(disabled bool) Option {
	return func(o *options) { o.disabled = disabled; o.set("WithDisabled") }
}

// WithAbandonPolicy sets what becomes of a key whose invocation ended
// without completing (a timeout, a crash): run again, or hold it, for an
// effect that must not happen twice (docs/in-progress.md).
// Default: POWERTOOLS_IDEMPOTENCY_ABANDON_POLICY, else [AbandonRetry].
func WithAbandonPolicy(p AbandonPolicy) Option {
	return func(o *options) { o.abandon = p; o.set("WithAbandonPolicy") }
}

// WithWaitForInProgress makes a duplicate that meets a running invocation
// wait for its response, instead of failing at once with an
// [*InProgressError]: so that an API client retrying a slow request gets
// the response (docs/in-progress.md).
// Default: POWERTOOLS_IDEMPOTENCY_WAIT_FOR_IN_PROGRESS, else false.
func WithWaitForInProgress(wait bool) Option {
	return func(o *options) { o.wait = wait; o.set("WithWaitForInProgress") }
}

// WithLeaseBeyondDeadline makes an invocation's lease last d past its
// deadline, for a handler whose effect can finish after the invocation
// ends; a crashed invocation's key stays blocked d longer
// (docs/in-progress.md).
// Default: POWERTOOLS_IDEMPOTENCY_LEASE_BEYOND_DEADLINE, else 0.
func WithLeaseBeyondDeadline(d time.Duration) Option {
	return func(o *options) { o.leaseBeyond = d; o.set("WithLeaseBeyondDeadline") }
}

// WithReconcile sets how the next duplicate resolves an UNCERTAIN key (see
// [Uncertain]): fn asks the downstream whether the effect happened, and
// returns its result and true, false to run the handler, or an error if it
// cannot tell. Out must be the wrapped function's
// (docs/uncertain-outcomes.md).
// Default: none: an operator resolves the record.
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

// WithCompatibility makes keys and records those of Powertools for AWS
// Lambda in Python or TypeScript, so that a Go function can share a table
// with theirs, as in a migration (docs/comparison.md).
// Default: POWERTOOLS_IDEMPOTENCY_COMPATIBILITY, else [OwnFormat].
func WithCompatibility(c Compatibility) Option {
	return func(o *options) { o.compat = c; o.set("WithCompatibility") }
}

// WithHash sets the hash of keys and payload hashes (MD5, SHA1, SHA224,
// SHA256, SHA384 or SHA512): in a compatibility mode, the one the shared
// Powertools function was given (docs/comparison.md).
// Default: POWERTOOLS_IDEMPOTENCY_HASH_FUNCTION, else SHA-256, or MD5 in
// Powertools' modes.
func WithHash(h crypto.Hash) Option {
	return func(o *options) { o.hash = h; o.set("WithHash") }
}

// WithPythonHandler names, in [PowertoolsPython] mode, the Python handler
// whose records a handler shares ("app.lambda_handler"), since Powertools
// Python's key prefix is "<function>.<handler>" (docs/comparison.md).
// Default: POWERTOOLS_IDEMPOTENCY_PYTHON_HANDLER.
func WithPythonHandler(name string) Option {
	return func(o *options) { o.pythonHandler = name; o.set("WithPythonHandler") }
}

// WithObserver sets a function told how every invocation ended, before its
// result is returned, on its goroutine: for metrics, logs and traces of
// your own (docs/operations.md#traces).
// Default: none.
func WithObserver(fn func(ctx context.Context, o Observation)) Option {
	return func(o *options) { o.observer = fn; o.set("WithObserver") }
}

// WithCloudWatchMetrics writes to w, after each invocation, a CloudWatch
// embedded metric format document in namespace ("" for Powertools'): a
// count per [Outcome] and the durations, for dashboards and alarms with no
// code (docs/operations.md#metrics). A nil w turns metrics off.
// Default: for a handler, os.Stdout when POWERTOOLS_IDEMPOTENCY_METRICS is
// true, else off.
func WithCloudWatchMetrics(w io.Writer, namespace string) Option {
	return func(o *options) {
		o.metrics = w
		o.setting(settingMetrics, "WithCloudWatchMetrics")
		if namespace != "" {
			o.namespace = namespace
			o.setting(settingNamespace, "WithCloudWatchMetrics")
		}
	}
}

// WithMetrics writes to w, after each invocation, a CloudWatch embedded
// metric format document. A nil w turns metrics off.
//
// Deprecated: use [WithCloudWatchMetrics](w, ""), which takes the
// namespace too.
func WithMetrics(w io.Writer) Option {
	return func(o *options) { o.metrics = w; o.setting(settingMetrics, "WithMetrics") }
}

// WithMetricsNamespace sets the CloudWatch namespace of the metrics.
//
// Deprecated: give the namespace to [WithCloudWatchMetrics].
func WithMetricsNamespace(namespace string) Option {
	return func(o *options) { o.namespace = namespace; o.setting(settingNamespace, "WithMetricsNamespace") }
}

// WithOutcomeLog logs, with the wrapper's logger, one record per invocation
// that says how it ended, its key and its duration: what an operator
// searches by key (docs/operations.md#the-outcome-log).
// Default: for a handler, POWERTOOLS_IDEMPOTENCY_LOG_OUTCOME, else off.
func WithOutcomeLog(on bool) Option {
	return func(o *options) { o.outcomeLog = on; o.set("WithOutcomeLog") }
}
