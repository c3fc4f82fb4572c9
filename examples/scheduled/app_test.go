package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// The unit tests: the function on the in-memory store, against the tests'
// job service. Runs that die are in the crash tests, under the emulator.

const job = "report"

// tickAt is the Scheduler event of job's tick at minute m of a fixed hour.
func tickAt(m int) Event {
	return Event{Job: job, Time: time.Date(2026, 3, 1, 4, m, 0, 0, time.UTC).Format(time.RFC3339)}
}

func timeOf(t *testing.T, e Event) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, e.Time)
	if err != nil {
		t.Fatal(err)
	}
	return at.UTC()
}

type unit struct {
	app   *App
	store *idempotencytest.Store
	jobs  *jobService
}

func newUnit(t *testing.T, cfg Config) *unit {
	t.Helper()
	u := &unit{store: idempotencytest.NewStore(), jobs: newJobService()}
	srv := httptest.NewServer(u.jobs)
	t.Cleanup(srv.Close)
	var err error
	u.app, err = NewApp(u.store, &JobClient{BaseURL: srv.URL, HTTP: srv.Client()}, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// handle runs one invocation with a Lambda-like deadline.
func (u *unit) handle(e Event) (Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return u.app.Handle(ctx, e)
}

// locks returns the job lock's records.
func (u *unit) locks() []idempotency.Record {
	var locks []idempotency.Record
	for _, r := range u.store.Records() {
		if strings.HasPrefix(r.Key, "lock#") {
			locks = append(locks, r)
		}
	}
	return locks
}

func TestRetryOfATickReplays(t *testing.T) {
	t.Parallel()
	u := newUnit(t, Config{Job: job})
	first, err := u.handle(tickAt(0))
	if err != nil || first.Status != StatusRan || first.RunID == "" || first.Replayed {
		t.Fatalf("first delivery: %+v, %v; want a run", first, err)
	}
	// The same tick as a scheduled rule's event: the job from JOB_NAME,
	// the time spelt another way.
	rule := Event{Time: "2026-03-01T05:00:00+01:00"}
	for _, e := range []Event{tickAt(0), rule} {
		again, err := u.handle(e)
		want := first
		want.Replayed = true
		if err != nil || again != want {
			t.Errorf("retry %+v: %+v, %v; want %+v", e, again, err, want)
		}
	}
	if n := len(u.jobs.Runs()); n != 1 {
		t.Errorf("the job ran %d times, want 1", n)
	}
	if locks := u.locks(); len(locks) != 0 {
		t.Errorf("job lock records after the run: %+v, want none: it is released", locks)
	}
}

func TestInvalidEvents(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		cfg  Config
		e    Event
	}{
		{"no time", Config{Job: job}, Event{Job: job}},
		{"not RFC 3339", Config{Job: job}, Event{Job: job, Time: "1 March 2026"}},
		{"no job", Config{}, Event{Time: "2026-03-01T04:00:00Z"}},
	} {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			u := newUnit(t, tt.cfg)
			_, err := u.handle(tt.e)
			if _, ok := errors.AsType[*InvalidEventError](err); !ok {
				t.Errorf("Handle(%+v) = %v, want an *InvalidEventError", tt.e, err)
			}
			if n := len(u.store.Records()); n != 0 {
				t.Errorf("%d records, want none", n)
			}
		})
	}
}

// While a run holds the job, the next tick is skipped until the run's
// deadline, and remembered as skipped; once the run is over the lock is
// gone and the tick after runs.
func TestNextTickWhileTheJobRuns(t *testing.T) {
	t.Parallel()
	u := newUnit(t, Config{Job: job})
	release := u.jobs.Hold()
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	deadline, _ := ctx.Deadline()
	done := make(chan Result, 1)
	go func() {
		res, err := u.app.Handle(ctx, tickAt(0))
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-u.jobs.arrived

	next, err := u.handle(tickAt(5))
	if err != nil || next.Status != StatusSkipped {
		t.Fatalf("next tick during the run: %+v, %v; want skipped", next, err)
	}
	if !next.BusyUntil.Equal(deadline.Truncate(time.Millisecond)) {
		t.Errorf("skipped until %v, want the running invocation's deadline %v", next.BusyUntil, deadline)
	}
	release()
	if first := <-done; first.Status != StatusRan {
		t.Fatalf("the run: %+v", first)
	}
	if locks := u.locks(); len(locks) != 0 {
		t.Errorf("job lock records after the run: %+v, want none", locks)
	}
	if again, err := u.handle(tickAt(5)); err != nil || again.Status != StatusSkipped || !again.Replayed {
		t.Errorf("retry of the skipped tick: %+v, %v; want its skip replayed", again, err)
	}
	if after, err := u.handle(tickAt(10)); err != nil || after.Status != StatusRan {
		t.Errorf("the tick after the run: %+v, %v; want a run", after, err)
	}
	if runs := u.jobs.Runs(); len(runs) != 2 || u.jobs.Overlapped() {
		t.Errorf("runs %+v (overlapping: %v), want the ticks at :00 and :10, one at a time", runs, u.jobs.Overlapped())
	}
}

// A refused run releases both records: the retry runs the job. A run
// whose answer never came keeps the tick UNCERTAIN: its retry asks the
// job service and returns the run it finds, and the next tick settles
// the lock and runs.
func TestJobFailures(t *testing.T) {
	t.Parallel()
	t.Run("refused", func(t *testing.T) {
		u := newUnit(t, Config{Job: job})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}))
		defer srv.Close()
		good := u.app.jobs.BaseURL
		u.app.jobs.BaseURL = srv.URL
		_, err := u.handle(tickAt(0))
		if jobErr, ok := errors.AsType[*JobError](err); !ok || !jobErr.Refused() {
			t.Fatalf("refused run: %v, want a refused *JobError", err)
		}
		if n := len(u.store.Records()); n != 0 {
			t.Fatalf("%d records after a refused run, want none", n)
		}
		u.app.jobs.BaseURL = good
		if res, err := u.handle(tickAt(0)); err != nil || res.Status != StatusRan {
			t.Errorf("retry: %+v, %v; want a run", res, err)
		}
	})
	t.Run("no answer", func(t *testing.T) {
		u := newUnit(t, Config{Job: job})
		u.jobs.CrashNext(crashAfterRun, func() {}) // the run is made, its answer dropped
		_, err := u.handle(tickAt(0))
		if _, ok := errors.AsType[*idempotency.UncertainError](err); !ok {
			t.Fatalf("run without an answer: %v, want an *idempotency.UncertainError", err)
		}
		retry, err := u.handle(tickAt(0))
		if err != nil || retry.Status != StatusRan || !retry.Reconciled || retry.RunID != u.jobs.Runs()[0].ID {
			t.Fatalf("retry: %+v, %v; want the run found by reconciling", retry, err)
		}
		if next, err := u.handle(tickAt(5)); err != nil || next.Status != StatusRan {
			t.Errorf("next tick: %+v, %v; want a run", next, err)
		}
		if n := u.jobs.RunsOf(timeOf(t, tickAt(0))); n != 1 {
			t.Errorf("the tick at :00 ran %d times, want 1", n)
		}
		if locks := u.locks(); len(locks) != 0 {
			t.Errorf("job lock records: %+v, want none", locks)
		}
	})
}

// The job lock must outlive a run and its abandon grace: each invocation
// checks, since a function does not know its timeout before it is invoked.
func TestLockExpiryMustOutlastTheRun(t *testing.T) {
	t.Parallel()
	u := newUnit(t, Config{Job: job, LockExpiry: 20 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := u.app.Handle(ctx, tickAt(0)); err == nil || !strings.Contains(err.Error(), "JOB_LOCK_EXPIRES_AFTER") {
		t.Errorf("a 20s lock for a 30s invocation: %v, want a configuration error", err)
	}
	if n := len(u.jobs.Runs()); n != 0 {
		t.Errorf("the job ran %d times, want 0", n)
	}
}

func TestConfigFromEnv(t *testing.T) {
	for _, tt := range []struct {
		name, url, lockExpiry string
		ok                    bool
	}{
		{"defaults", "http://127.0.0.1:1", "", true},
		{"lock 15m", "https://jobs.example.com/", "15m", true},
		{"lock within the grace", "http://127.0.0.1:1", "5s", false},
		{"lock negative", "http://127.0.0.1:1", "-1h", false},
		{"lock not a duration", "http://127.0.0.1:1", "an hour", false},
		{"no URL", "", "", false},
		{"URL without a scheme", "jobs.example.com", "", false},
	} {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			t.Setenv("AWS_REGION", "us-east-1")
			t.Setenv("POWERTOOLS_IDEMPOTENCY_TABLE", "records")
			t.Setenv("JOB_SERVICE_URL", tt.url)
			t.Setenv("JOB_LOCK_EXPIRES_AFTER", tt.lockExpiry)
			_, err := newAppFromEnv(context.Background(), slog.New(slog.DiscardHandler))
			if (err == nil) != tt.ok {
				t.Errorf("JOB_SERVICE_URL=%q JOB_LOCK_EXPIRES_AFTER=%q: %v, want ok: %v", tt.url, tt.lockExpiry, err, tt.ok)
			}
		})
	}
}
