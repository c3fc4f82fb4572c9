package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Event is what the schedule sends: template.yaml's Scheduler input,
// {"job": ..., "time": "<aws.scheduler.scheduled-time>"}, or an EventBridge
// scheduled rule's event, whose "time" is the scheduled time and which
// names no job. Its other fields are ignored.
type Event struct {
	Job  string `json:"job"`
	Time string `json:"time"`
}

// InvalidEventError is an event that is not a tick. Nothing is stored, and
// retrying it cannot help.
type InvalidEventError struct {
	Reason string
}

func (e *InvalidEventError) Error() string { return "scheduled: invalid event: " + e.Reason }

// Tick is one firing of the schedule for one job: the tick's idempotency
// key is all of it.
type Tick struct {
	Job  string    `json:"job"`
	Time time.Time `json:"time"` // the scheduled time, in UTC
}

// parse reads the event as a tick of its job, or of job when it names
// none. The time is kept in UTC, so that two spellings of one instant are
// one key.
func (e Event) parse(job string) (Tick, error) {
	if e.Job != "" {
		job = e.Job
	}
	if job == "" {
		return Tick{}, &InvalidEventError{Reason: `no "job", and JOB_NAME is not set`}
	}
	t, err := time.Parse(time.RFC3339, e.Time)
	if err != nil {
		return Tick{}, &InvalidEventError{Reason: fmt.Sprintf(`"time" %q is not an RFC 3339 time such as 2026-01-02T03:04:05Z`, e.Time)}
	}
	return Tick{Job: job, Time: t.UTC()}, nil
}

// Status is what a tick did.
type Status string

const (
	// StatusRan: the tick ran the job.
	StatusRan Status = "ran"
	// StatusSkipped: another run of the job held the lock (until
	// BusyUntil, its deadline), or was being reconciled.
	StatusSkipped Status = "skipped"
	// StatusBlocked: a run of the job died, and AbandonBlock keeps the job
	// locked until BusyUntil.
	StatusBlocked Status = "blocked"
)

// Result is the function's response: what the tick did, stored with the
// tick's record and returned to every retry of the tick.
type Result struct {
	Job    string    `json:"job"`
	Tick   time.Time `json:"tick"`
	Status Status    `json:"status"`
	// RunID is the job service's run, when the tick ran.
	RunID string `json:"run_id,omitempty"`
	// BusyUntil is, for a tick skipped or blocked, when the job is
	// expected to be free.
	BusyUntil time.Time `json:"busy_until,omitzero"`
	// Reconciled: the tick's run died, and the job service said that it
	// ran (see the package documentation).
	Reconciled bool `json:"reconciled,omitempty"`
	// Replayed: this is the stored result of an earlier delivery of the
	// tick. It is set on the way out, never stored.
	Replayed bool `json:"replayed,omitempty"`
}

// runTick is the tick's idempotent part: it runs the job under the job
// lock, or records why it did not. Only a failed run is an error: the
// tick's record is then released (or kept UNCERTAIN) for a retry.
func (a *App) runTick(ctx context.Context, t Tick) (Result, error) {
	key, ok := idempotency.KeyFromContext(ctx)
	if !ok {
		// Idempotency is off (POWERTOOLS_IDEMPOTENCY_DISABLED): the job
		// service can still deduplicate.
		key = t.Job + "@" + t.Time.Format(time.RFC3339)
	}
	_, err := a.lock(ctx, lockArg{Job: t.Job, Tick: t.Time, TickKey: key})
	res := Result{Job: t.Job, Tick: t.Time}
	var (
		done     *finished
		held     *idempotency.InProgressError
		dead     *idempotency.AbandonedError
		settling *idempotency.UncertainError
	)
	switch {
	case errors.As(err, &done):
		res.Status, res.RunID = StatusRan, done.run.ID
	case errors.As(err, &held):
		res.Status, res.BusyUntil = StatusSkipped, held.LeaseEnd
	case errors.As(err, &dead):
		res.Status, res.BusyUntil = StatusBlocked, dead.Expiry
	case errors.As(err, &settling) && settling.Key != "":
		// The lock itself is UNCERTAIN, and another tick is settling it.
		// (Without a key, the error is the job's own: see runJob.)
		res.Status, res.BusyUntil = StatusSkipped, settling.LeaseEnd
	case err == nil:
		return Result{}, errors.New("scheduled: the job lock was replayed, but this function never completes it")
	default:
		return Result{}, err
	}
	return res, nil
}

// findRun is the tick's reconcile function: when the run of a tick died
// (AbandonUncertain) or the job service did not answer, it asks the
// service whether a run was made under the tick's key.
func (a *App) findRun(ctx context.Context, key string) (Result, bool, error) {
	run, found, err := a.jobs.Find(ctx, key)
	if err != nil || !found {
		return Result{}, false, err
	}
	return Result{Job: run.Job, Tick: run.Tick.UTC(), Status: StatusRan, RunID: run.ID, Reconciled: true}, true, nil
}

// markReplayed is the tick's replay hook.
func markReplayed(_ context.Context, r Result, _ *idempotency.Record) (Result, error) {
	r.Replayed = true
	return r, nil
}
