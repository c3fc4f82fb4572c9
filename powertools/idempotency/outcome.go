package idempotency

import (
	"context"
	"time"
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
	// OutcomeNoKey: no key, none required: the handler ran without
	// idempotency.
	OutcomeNoKey Outcome = "no_key"
)

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
	// CompletedAt is, for OutcomeReplayed, when the replayed response was
	// stored ([Record.CompletedAt]): the replay's age is the time since.
	// Zero otherwise, and for records that do not say.
	CompletedAt time.Time
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

// observers makes the one observer of an engine: the metrics and the
// outcome log that o turns on, then WithObserver's. bad names the option
// behind an error.
func (e *engine) observers(o *options, bad func(string, error) error) (func(context.Context, Observation), error) {
	var metrics *metricsWriter
	if o.metrics != nil {
		var err error
		if metrics, err = e.newMetricsWriter(o.metrics, o.namespace, o.getenv(envFunctionName)); err != nil {
			if _, ok := o.isSet("WithMetricsNamespace"); ok && checkNamespace(o.namespace) != nil {
				return nil, bad("WithMetricsNamespace", err)
			}
			return nil, bad("WithMetrics", err)
		}
	}
	user, logOutcome := o.observer, o.outcomeLog
	if metrics == nil && !logOutcome {
		return user, nil
	}
	return func(ctx context.Context, obs Observation) {
		// One reading of the clock, so that the document and the log
		// give a replay the same age.
		now := e.now()
		if metrics != nil {
			metrics.observe(ctx, obs, now)
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
	return e.now()
}

// since is the time from start, of startTimer, to now; 0 when start is
// zero.
func (e *engine) since(start time.Time) time.Duration {
	if start.IsZero() {
		return 0
	}
	return e.now().Sub(start)
}

// observe tells e's observer, if any, how the invocation that began at
// start ended.
func (e *engine) observe(ctx context.Context, start time.Time, res result, err error) {
	if e.observer == nil {
		return
	}
	o := Observation{Outcome: res.outcome, Key: res.key, Err: err, Duration: e.since(start), HandlerDuration: res.handler}
	if res.outcome == OutcomeReplayed {
		o.CompletedAt = res.completedAt
	}
	e.observer(ctx, o)
}
