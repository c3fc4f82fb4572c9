package idempotency

import (
	"context"
	"log/slog"
	"time"
)

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
