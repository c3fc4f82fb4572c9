package idempotency

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"time"

	"github.com/gopowertools/lambda/internal/emf"
)

// Outcome is what became of one invocation under idempotency: what
// [WithObserver] is told, to count or to log.
type Outcome string

// The outcomes, one per invocation. The handler ran for OutcomeNew,
// OutcomeReleased, OutcomeLeaseLost, OutcomeNoKey and, when it returned an
// [Uncertain] error, OutcomeUncertain; for no other.
const (
	// OutcomeNew: a first call; the handler succeeded and its response
	// was stored (or could not be, which is logged). When its result could
	// not be encoded, the key is completed without a response and Err
	// says why.
	OutcomeNew Outcome = "new"
	// OutcomeReplayed: the stored response was returned; the handler did
	// not run.
	OutcomeReplayed Outcome = "replayed"
	// OutcomeInProgress: another invocation holds the key
	// ([*InProgressError]).
	OutcomeInProgress Outcome = "in_progress"
	// OutcomeConflict: the payload differs from the stored one's
	// ([*PayloadConflictError]).
	OutcomeConflict Outcome = "conflict"
	// OutcomeReleased: the handler returned an error, or a commit of its
	// staged writes was refused ([CommitRefused]); the key was released
	// for a retry.
	OutcomeReleased Outcome = "released"
	// OutcomeUncertain: the key is UNCERTAIN ([*UncertainError]), because
	// the handler said so or a duplicate met such a record.
	OutcomeUncertain Outcome = "uncertain"
	// OutcomeStoreError: the store failed before the handler ran, or a
	// stored record cannot be read ([*PersistenceError],
	// [*CorruptedRecordError]).
	OutcomeStoreError Outcome = "store_error"
	// OutcomeLeaseLost: the handler ran, but its lease ended before it
	// finished and another invocation took the key, so the effect may
	// have run twice; raise the function's timeout or the lease. The
	// caller got the handler's response, or, when the store commits the
	// handler's staged writes with the record, a [*PersistenceError]:
	// nothing was committed.
	OutcomeLeaseLost Outcome = "lease_lost"
	// OutcomeAbandoned: the invocation holding the key ended without
	// completing, and [AbandonBlock] keeps the key locked
	// ([*AbandonedError]).
	OutcomeAbandoned Outcome = "abandoned"
	// OutcomeNotStored: a duplicate of a success whose response was too
	// large to store ([*ResponseNotStoredError]).
	OutcomeNotStored Outcome = "not_stored"
	// OutcomeInvalidEvent: the event was refused ([*InvalidEventError]).
	OutcomeInvalidEvent Outcome = "invalid_event"
	// OutcomeMissingKey: no key, and one is required ([*MissingKeyError]).
	OutcomeMissingKey Outcome = "missing_key"
	// OutcomeUndecodableEvent: the event does not decode into the
	// handler's input type ([*UndecodableEventError]); the handler did not
	// run, and the key was released.
	OutcomeUndecodableEvent Outcome = "undecodable_event"
	// OutcomeNoKey: no key, none required: the handler ran without
	// idempotency.
	OutcomeNoKey Outcome = "no_key"
)

// ending is how an invocation ends with an error of the middleware's own:
// the outcome it has, hence its metric (metricName), and the answer of
// the HTTP adapter (httpapi): its status and problem code, or 0 and ""
// when it answers none of its own and returns the error, for Lambda to
// report as it reports a handler's.
type ending struct {
	err     reflect.Type
	outcome Outcome
	status  int
	problem string
}

// endings is the one table of the middleware's errors: each error type
// has its row. An invocation whose path does not say its outcome (a
// success, a handler's error, a lost lease) has the outcome of its
// error's row. CommitError reaches a caller inside a PersistenceError,
// InexactNumberError inside an InvalidEventError: their rows say what the
// error that carries them says.
var endings = [...]ending{
	{reflect.TypeFor[*InvalidEventError](), OutcomeInvalidEvent, 400, "ambiguous-request"}, // Bad Request
	{reflect.TypeFor[*InexactNumberError](), OutcomeInvalidEvent, 400, "ambiguous-request"},
	{reflect.TypeFor[*MissingKeyError](), OutcomeMissingKey, 400, "missing-key"},
	{reflect.TypeFor[*UndecodableEventError](), OutcomeUndecodableEvent, 0, ""},
	{reflect.TypeFor[*PayloadConflictError](), OutcomeConflict, 422, "key-reused"}, // Unprocessable Content
	{reflect.TypeFor[*InProgressError](), OutcomeInProgress, 409, "in-progress"},   // Conflict
	{reflect.TypeFor[*UncertainError](), OutcomeUncertain, 409, "outcome-uncertain"},
	{reflect.TypeFor[*AbandonedError](), OutcomeAbandoned, 409, "outcome-uncertain"},
	{reflect.TypeFor[*ResponseNotStoredError](), OutcomeNotStored, 409, "response-not-stored"},
	{reflect.TypeFor[*CorruptedRecordError](), OutcomeStoreError, 500, "record-unreadable"}, // Internal Server Error
	{reflect.TypeFor[*PersistenceError](), OutcomeStoreError, 503, "store-unavailable"},     // Service Unavailable
	{reflect.TypeFor[*CommitError](), OutcomeStoreError, 503, "store-unavailable"},
	{reflect.TypeFor[*ConfigError](), OutcomeStoreError, 0, ""}, // a store that its configuration keeps from working
}

// endingOf returns the row of the outermost error in err's tree that has
// one, as errors.As walks it, and the error; nil when none has. An
// UncertainError without a key is a handler's own error (made with
// Uncertain), not the middleware's: it has no row.
func endingOf(err error) (*ending, error) {
	if err == nil {
		return nil, nil
	}
	if u, ok := err.(*UncertainError); !ok || u.Key != "" {
		t := reflect.TypeOf(err)
		for i := range endings {
			if endings[i].err == t {
				return &endings[i], err
			}
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return endingOf(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, inner := range u.Unwrap() {
			if e, cause := endingOf(inner); e != nil {
				return e, cause
			}
		}
	}
	return nil, nil
}

// metricName names the count of the outcome o: "Idempotency" and o in
// upper camel case (IdempotencyInProgress). A metric has 1 in the
// document of an invocation that ended so; docs/operations.md says what
// each means.
func metricName(o Outcome) string {
	var b strings.Builder
	b.WriteString("Idempotency")
	for word := range strings.SplitSeq(string(o), "_") {
		if word != "" {
			b.WriteString(strings.ToUpper(word[:1]) + word[1:])
		}
	}
	return b.String()
}

// Observation is what [WithObserver] is told of one invocation.
type Observation struct {
	Outcome Outcome
	// Key is the idempotency key, or "" when there was none.
	Key string
	// Err is the error the caller got, or nil.
	Err error
	// Duration is the invocation's time in the middleware, the handler's
	// included, on the wrapper's clock (see [WithClock]).
	Duration time.Duration
	// HandlerDuration is how long the handler ran, the decoding of its
	// event and the encoding of its response included, on the wrapper's
	// clock, when it ran in this invocation (see the outcomes above);
	// zero otherwise.
	HandlerDuration time.Duration
	// HandlerRan reports that the handler ran in this invocation: what
	// a trace or a log says of an invocation whose outcome alone does not
	// tell (OutcomeUncertain), and which HandlerDuration cannot, being
	// zero on a clock that did not move.
	HandlerRan bool
	// CompletedAt is, for OutcomeReplayed, when the replayed response was
	// stored ([Record.CompletedAt]): the replay's age is the time since.
	// Zero otherwise, and for records that do not say.
	CompletedAt time.Time
}

// observers makes the one observer of an engine: the metrics and the
// outcome log that o turns on, then WithObserver's. bad names the option
// behind an error.
func (e *engine) observers(o *options, bad func(string, error) error) (func(context.Context, Observation), error) {
	var metrics *emf.Writer
	if o.metrics != nil {
		if err := emf.CheckNamespace(o.namespace); err != nil {
			return nil, bad(settingNamespace, err)
		}
		var dims []emf.Dimension
		if fn := o.getenv(envFunctionName); fn != "" {
			dims = append(dims, emf.Dimension{Name: "FunctionName", Value: fn})
		}
		dims = append(dims, emf.Dimension{Name: "KeyPrefix", Value: e.prefix})
		var err error
		if metrics, err = emf.NewWriter(o.metrics, o.namespace, dims...); err != nil {
			return nil, bad(settingMetrics, err)
		}
	}
	user, logOutcome := o.observer, o.outcomeLog
	if metrics == nil && !logOutcome {
		return user, nil
	}
	return func(ctx context.Context, obs Observation) {
		// One reading of the clock, so that the document and the log
		// give a replay the same age.
		now := e.clock()
		if metrics != nil {
			e.writeMetrics(ctx, metrics, obs, now)
		}
		if logOutcome {
			e.logOutcome(ctx, obs, now)
		}
		if user != nil {
			user(ctx, obs)
		}
	}, nil
}

// startTimer returns the time an invocation or a handler starts, for the
// durations of an [Observation]; the zero time when there is no observer
// to read them, since reading the clock is not free (55 ns a read on a
// virtual machine measured here, and a first call would read it five
// times).
func (e *engine) startTimer() time.Time {
	if e.observer == nil {
		return time.Time{}
	}
	return e.clock()
}

// since is the time from start, of startTimer, to now; 0 when start is
// zero.
func (e *engine) since(start time.Time) time.Duration {
	if start.IsZero() {
		return 0
	}
	return e.clock().Sub(start)
}

// observe tells e's observer, if any, how the invocation that began at
// start ended.
func (e *engine) observe(ctx context.Context, start time.Time, res result, err error) {
	if e.observer == nil {
		return
	}
	if res.outcome == "" {
		if end, _ := endingOf(err); end != nil {
			res.outcome = end.outcome
		}
	}
	o := Observation{Outcome: res.outcome, Key: res.key, Err: err, Duration: e.since(start), HandlerDuration: res.handler, HandlerRan: res.handlerRan}
	if res.outcome == OutcomeReplayed {
		o.CompletedAt = res.completedAt
	}
	e.observer(ctx, o)
}

// The other metrics, and the dimensions of all. The names start with
// Idempotency because the namespace is often the function's own, shared
// with its other metrics.
const (
	// metricDuration is Observation.Duration: the time in the
	// middleware, the handler's included.
	metricDuration = "IdempotencyInvocationDuration"
	// metricHandler is Observation.HandlerDuration, when the handler ran.
	metricHandler = "IdempotencyHandlerDuration"
	// metricReplayAge is, for a replay, the time since the response was
	// stored.
	metricReplayAge = "IdempotencyReplayAge"

	// defaultMetricsNamespace is the namespace of Powertools for AWS
	// Lambda (TypeScript) when none is set.
	defaultMetricsNamespace = "default_namespace"
)

// writeMetrics writes the document of an invocation that ended at now:
// its outcome's count, its durations and, for a replay, the age of the
// response.
func (e *engine) writeMetrics(ctx context.Context, w *emf.Writer, o Observation, now time.Time) {
	var metrics []emf.Metric
	if o.Outcome != "" {
		metrics = append(metrics, emf.Metric{Name: metricName(o.Outcome), Unit: "Count", Value: 1})
	}
	metrics = append(metrics, emf.Milliseconds(metricDuration, o.Duration))
	if o.HandlerDuration > 0 {
		metrics = append(metrics, emf.Milliseconds(metricHandler, o.HandlerDuration))
	}
	if o.Outcome == OutcomeReplayed && !o.CompletedAt.IsZero() {
		// The response may have been stored by another execution
		// environment, whose clock can be a little ahead of ours.
		metrics = append(metrics, emf.Milliseconds(metricReplayAge, max(now.Sub(o.CompletedAt), 0)))
	}
	if err := w.Write(now, metrics...); err != nil {
		e.log().WarnContext(ctx, "idempotency: could not write the metrics of an invocation", "outcome", o.Outcome, "error", err)
	}
}

// logOutcome logs the record of an invocation that ended at now.
func (e *engine) logOutcome(ctx context.Context, o Observation, now time.Time) {
	level := slog.LevelInfo
	switch {
	case o.Outcome == OutcomeLeaseLost || o.Outcome == OutcomeAbandoned || o.Outcome == OutcomeStoreError:
		level = slog.LevelError
	case o.Err != nil:
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{slog.String("outcome", string(o.Outcome)), slog.String("key_prefix", e.prefix)}
	if o.Key != "" {
		attrs = append(attrs, slog.String("key", o.Key))
	}
	attrs = append(attrs, slog.Duration("duration", o.Duration))
	if o.Outcome == OutcomeReplayed && !o.CompletedAt.IsZero() {
		attrs = append(attrs, slog.Duration("replay_age", max(now.Sub(o.CompletedAt), 0)))
	}
	if o.Err != nil {
		attrs = append(attrs, slog.Any("error", o.Err))
	}
	e.log().LogAttrs(ctx, level, "idempotency: invocation", attrs...)
}
