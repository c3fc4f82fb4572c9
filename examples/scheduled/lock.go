package main

import (
	"context"
	"errors"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// lockArg is the job lock's argument. The lock is keyed on Job alone
// (WithEventKey("job")); the tick and its key go along for the run.
type lockArg struct {
	Job     string    `json:"job"`
	Tick    time.Time `json:"tick"`
	TickKey string    `json:"tick_key"` // the job service's Idempotency-Key
}

// finished carries a finished run out of the job lock. Returned as the
// lock's error, it makes the middleware release the lock's record (delete
// it) instead of storing it COMPLETED, to be replayed to the ticks that
// follow: the lock is a mutex, not a memo. See the package documentation.
type finished struct{ run Run }

func (f *finished) Error() string { return "scheduled: the run finished; the job lock is released" }

// runJob runs the job while the tick holds the job lock.
func (a *App) runJob(ctx context.Context, arg lockArg) (Run, error) {
	run, err := a.jobs.Run(ctx, arg.TickKey, Tick{Job: arg.Job, Time: arg.Tick})
	if jobErr, ok := errors.AsType[*JobError](err); ok && !jobErr.Refused() {
		// Sent, and no answer: the job may have run. The tick's record
		// stays UNCERTAIN until a retry asks the service (findRun); the
		// lock's does too, until the next tick settles it
		// (nothingUnderTheLock) and runs.
		return Run{}, idempotency.Uncertain(err)
	}
	if err != nil {
		// Refused: both records are released, and Lambda's retry of the
		// tick runs the job again.
		return Run{}, err
	}
	return Run{}, &finished{run: run}
}

// nothingUnderTheLock is the job lock's reconcile function, called when
// the run holding the lock died (AbandonUncertain) or its job service
// request got no answer. The lock guards no effect of its own: each run
// is settled by its tick's record, which asks the job service (findRun)
// when the tick is retried. So nothing happened under the lock, and the
// tick that found it runs. Answering "it happened" would store the lock
// COMPLETED, and the ticks that follow would be skipped until it expired.
func nothingUnderTheLock(context.Context, string) (Run, bool, error) {
	return Run{}, false, nil
}
