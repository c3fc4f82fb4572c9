package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// App is the scheduled function: Handle runs one tick.
type App struct {
	tick func(context.Context, Tick) (Result, error) // keyed on the job and the scheduled time
	lock func(context.Context, lockArg) (Run, error) // keyed on the job
	jobs *JobClient
	cfg  Config
	log  *slog.Logger
}

// NewApp returns the function, its two idempotency scopes built on store
// with opts added to both. An invalid option or environment variable
// panics with an *idempotency.ConfigError (see idempotency.WrapFunc),
// which makes the function fail at cold start rather than on a tick.
func NewApp(store idempotency.Store, jobs *JobClient, cfg Config, log *slog.Logger, opts ...idempotency.Option) (*App, error) {
	if cfg.LockExpiry == 0 {
		cfg.LockExpiry = defaultLockExpiry
	}
	a := &App{jobs: jobs, cfg: cfg, log: log}
	a.tick = idempotency.WrapFunc("tick", store, a.runTick, append([]idempotency.Option{
		idempotency.WithKeyRequired(true),
		idempotency.WithDefaults(idempotency.WithExpiresAfter(defaultTickExpiry)),
		idempotency.WithReplayHook(markReplayed),
		idempotency.WithReconcile(a.findRun),
	}, opts...)...)
	a.lock = idempotency.WrapFunc("lock", store, a.runJob, append([]idempotency.Option{
		idempotency.WithEventKey("job"),
		idempotency.WithKeyRequired(true),
		idempotency.WithExpiresAfter(cfg.LockExpiry),
		idempotency.WithReconcile(nothingUnderTheLock),
	}, opts...)...)
	return a, nil
}

// Handle runs one tick of the schedule. Its result is the tick's, the same
// for every delivery of the tick. An error makes Lambda retry the
// asynchronous invocation, and, once its retries are spent, send the event
// to the function's on-failure destination.
func (a *App) Handle(ctx context.Context, e Event) (Result, error) {
	t, err := e.parse(a.cfg.Job)
	if err != nil {
		a.log.ErrorContext(ctx, "scheduled: invalid event", "err", err)
		return Result{}, err
	}
	if err := a.checkLockExpiry(ctx); err != nil {
		a.log.ErrorContext(ctx, "scheduled: configuration", "err", err)
		return Result{}, err
	}
	res, err := a.tick(ctx, t)
	if err != nil {
		level := slog.LevelError
		if _, ok := errors.AsType[*idempotency.InProgressError](err); ok {
			// Lambda retries it later, and it gets that run's result.
			level = slog.LevelWarn
		}
		a.log.Log(ctx, level, "scheduled: tick not run", "job", t.Job, "tick", t.Time, "err", err)
		return Result{}, err
	}
	level := slog.LevelInfo
	attrs := []any{"job", res.Job, "tick", res.Tick, "status", res.Status, "replayed", res.Replayed}
	switch res.Status {
	case StatusRan:
		attrs = append(attrs, "run_id", res.RunID, "reconciled", res.Reconciled)
	case StatusBlocked:
		level = slog.LevelError // a run died, and the job stays locked: someone should look
		fallthrough
	default:
		attrs = append(attrs, "busy_until", res.BusyUntil)
	}
	a.log.Log(ctx, level, "scheduled: tick", attrs...)
	return res, nil
}

// checkLockExpiry refuses to run when the job lock could expire before
// this invocation is over, or before a dead run of it counts as abandoned:
// another run of the job could then overlap it. Lambda does not tell a
// function its timeout before the first invocation, so this cannot be a
// cold-start check.
func (a *App) checkLockExpiry(ctx context.Context) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		return nil
	}
	if need := time.Until(deadline) + idempotency.AbandonGrace; a.cfg.LockExpiry <= need {
		return fmt.Errorf("JOB_LOCK_EXPIRES_AFTER=%v must exceed the function's timeout plus %v (%v here): the job lock would expire while a run holds it",
			a.cfg.LockExpiry, idempotency.AbandonGrace, need.Round(time.Second))
	}
	return nil
}
