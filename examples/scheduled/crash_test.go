package main

// Runs that die: the function under the emulator, its process killed with
// SIGKILL in the middle of the job (by the job service, at the point the
// test chose), then retries of the dead tick and the ticks that follow,
// from a new execution environment, under each abandon policy.

import (
	"testing"
	"time"

	"github.com/gopowertools/lambda/examples/internal/emulator"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// crashTimeout is the function timeout in these tests: a dead run's
// deadline comes this long after it began.
const crashTimeout = 3 * time.Second

func policyEnv(p idempotency.AbandonPolicy) string {
	return "POWERTOOLS_IDEMPOTENCY_ABANDON_POLICY=" + p.String()
}

// crash sends tick e to a new environment and kills the function at point
// p of its job's run. It returns the dead invocation's deadline, read from
// the tick's record, which it checks is still IN_PROGRESS.
func (w *world) crash(e Event, p crashPoint, env ...string) (deadline time.Time) {
	w.t.Helper()
	fn := w.sandbox(crashTimeout, env...)
	killed := make(chan struct{})
	w.jobs.CrashNext(p, func() {
		if n := emulator.Kill(w.binary); n != 1 {
			w.t.Errorf("killed %d function processes, want 1", n)
		}
		close(killed)
	})
	done := make(chan error, 1)
	go func() {
		_, err := fn.tick(e)
		done <- err
	}()
	select {
	case <-killed:
	case <-time.After(time.Minute):
		w.t.Fatal("the crash point was never reached")
	}
	key := <-w.jobs.arrived
	fn.em.Close()
	if err := <-done; err == nil {
		w.t.Fatal("the killed invocation answered")
	}
	rec := w.record(key)
	if rec.Status != idempotency.StatusInProgress {
		w.t.Fatalf("the dead tick's record is %s, want %s", rec.Status, idempotency.StatusInProgress)
	}
	return holderEnd(rec)
}

// retryUntilAnswered sends tick e every 250 ms while the function refuses
// it with an InProgressError, for at most limit, and returns the first
// other answer.
func retryUntilAnswered(t *testing.T, fn *function, e Event, limit time.Duration) answer {
	t.Helper()
	start := time.Now()
	for refusals := 0; ; refusals++ {
		res, err := fn.tick(e)
		if !isFunctionError(err, "InProgressError") {
			return answer{res: res, err: err, at: time.Now(), refusals: refusals}
		}
		if time.Since(start) > limit {
			t.Fatalf("still in progress %v after the crash", time.Since(start))
		}
		// A caller's retry interval: the lease ends on the wall clock,
		// which signals nothing.
		time.Sleep(250 * time.Millisecond)
	}
}

// AbandonRetry: the dead run's leases end at its deadline. The next tick
// meanwhile is skipped until then; the dead tick's retry is refused until
// then, and afterwards runs the job once more.
func TestCrashUnderRetry(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := policyEnv(idempotency.AbandonRetry)
	t0 := timeOf(t, tickAt(0))
	deadline := w.crash(tickAt(0), crashAfterRun, env)
	fn := w.sandbox(crashTimeout, env)

	next, err := fn.tick(tickAt(5))
	switch {
	case err != nil:
		t.Fatalf("next tick: %v", err)
	case time.Now().Before(deadline) && (next.Status != StatusSkipped || !next.BusyUntil.Equal(deadline)):
		t.Errorf("next tick before the dead run's deadline: %+v, want skipped until %v", next, deadline)
	case next.Status != StatusSkipped:
		t.Logf("the next tick came after the dead run's deadline (a slow machine): %s", next.Status)
	}

	a := retryUntilAnswered(t, fn, tickAt(0), crashTimeout+5*time.Second)
	retry := a.res
	if a.err != nil || retry.Status != StatusRan || retry.Replayed || retry.Reconciled {
		t.Fatalf("retry of the dead tick: %+v, %v; want a new run", retry, a.err)
	}
	if a.at.Before(deadline) {
		t.Errorf("the retry ran at %v, before the dead run's deadline %v", a.at, deadline)
	}
	if n := w.jobs.RunsOf(t0); n != 2 {
		t.Errorf("the dead tick ran %d times, want 2: once killed, once retried", n)
	}
	if again, err := fn.tick(tickAt(0)); err != nil || again.RunID != retry.RunID || !again.Replayed {
		t.Errorf("a later retry: %+v, %v; want the retried run %s replayed", again, err, retry.RunID)
	}
	if after, err := fn.tick(tickAt(10)); err != nil || after.Status != StatusRan {
		t.Errorf("the tick after: %+v, %v; want a run", after, err)
	}
	if n := w.jobs.RunsOf(t0); n != 2 || w.jobs.Overlapped() {
		t.Errorf("the dead tick ran %d times (overlapping: %v), want 2, one at a time", n, w.jobs.Overlapped())
	}
	t.Logf("retry: the next tick was %s; the dead tick's retry ran again %v after its deadline, after %d refusals; runs of the dead tick: %d",
		next.Status, a.at.Sub(deadline).Round(10*time.Millisecond), a.refusals, w.jobs.RunsOf(t0))
}

// AbandonBlock: ticks are skipped, then blocked, until the job lock
// expires; the next tick after it runs. The dead tick never runs again.
func TestCrashUnderBlock(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := []string{policyEnv(idempotency.AbandonBlock), "JOB_LOCK_EXPIRES_AFTER=12s"}
	t0 := timeOf(t, tickAt(0))
	deadline := w.crash(tickAt(0), crashAfterRun, env...)
	abandoned := deadline.Add(idempotency.AbandonGrace)
	lock := w.lock()
	fn := w.sandbox(crashTimeout, env...)

	// A tick every second, as a schedule would send them, each with a
	// retry of the dead tick, until one runs.
	var skipped, blocked int
	for m := 1; ; m++ {
		sent := time.Now()
		res, err := fn.tick(tickAt(m))
		at := time.Now()
		if err != nil {
			t.Fatalf("tick %d: %v", m, err)
		}
		if res.Status == StatusRan {
			if at.Before(lock.Expiry) {
				t.Errorf("tick %d ran at %v, before the job lock expired at %v", m, at, lock.Expiry)
			}
			if at.After(lock.Expiry.Add(5 * time.Second)) {
				t.Errorf("tick %d ran %v after the job lock expired, want within a few ticks", m, at.Sub(lock.Expiry))
			}
			break
		}
		switch {
		case res.Status == StatusSkipped && !sent.Before(abandoned):
			t.Errorf("tick %d was skipped, sent after the dead run counted as abandoned", m)
		case res.Status == StatusBlocked && at.Before(abandoned):
			t.Errorf("tick %d was blocked before the dead run counted as abandoned", m)
		case res.Status == StatusBlocked && !res.BusyUntil.Equal(lock.Expiry):
			t.Errorf("tick %d blocked until %v, want the lock's expiry %v", m, res.BusyUntil, lock.Expiry)
		}
		if res.Status == StatusSkipped {
			skipped++
		} else {
			blocked++
		}
		if _, err := fn.tick(tickAt(0)); !isFunctionError(err, "InProgressError") && !isFunctionError(err, "AbandonedError") {
			t.Errorf("retry of the dead tick: %v, want it refused", err)
		}
		if at.After(lock.Expiry.Add(10 * time.Second)) {
			t.Fatalf("no tick ran %v after the lock expired", at.Sub(lock.Expiry))
		}
		time.Sleep(time.Second) // the schedule's period, part of the scenario
	}
	if blocked == 0 {
		t.Error("no tick was blocked")
	}
	if _, err := fn.tick(tickAt(0)); !isFunctionError(err, "AbandonedError") {
		t.Errorf("retry of the dead tick after the job ran again: %v, want an AbandonedError", err)
	}
	if n := w.jobs.RunsOf(t0); n != 1 {
		t.Errorf("the dead tick ran %d times, want 1", n)
	}
	t.Logf("block: %d ticks skipped, %d blocked, then one ran once the lock expired %v after the dead run's deadline; runs of the dead tick: %d",
		skipped, blocked, lock.Expiry.Sub(deadline).Round(time.Second), w.jobs.RunsOf(t0))
}

// AbandonUncertain: from the grace after the dead run's deadline, the dead
// tick's retry asks the job service (the reconcile hook) and returns the
// run it finds, or runs the job once when there is none; the next tick
// takes the lock over and runs. No tick runs twice.
func TestCrashUnderUncertain(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		point crashPoint
	}{
		{"killed after the run", crashAfterRun},
		{"killed before the run", crashBeforeRun},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			env := policyEnv(idempotency.AbandonUncertain)
			t0 := timeOf(t, tickAt(0))
			deadline := w.crash(tickAt(0), tt.point, env)
			dead := w.jobs.Runs()
			if want := map[crashPoint]int{crashAfterRun: 1, crashBeforeRun: 0}[tt.point]; len(dead) != want {
				t.Fatalf("the killed invocation made %d runs, want %d", len(dead), want)
			}
			fn := w.sandbox(crashTimeout, env)

			a := retryUntilAnswered(t, fn, tickAt(0), crashTimeout+idempotency.AbandonGrace+5*time.Second)
			retry := a.res
			if a.err != nil || retry.Status != StatusRan {
				t.Fatalf("retry of the dead tick: %+v, %v; want a run", retry, a.err)
			}
			if abandoned := deadline.Add(idempotency.AbandonGrace); a.at.Before(abandoned) {
				t.Errorf("the retry answered at %v, before the dead run counted as abandoned at %v", a.at, abandoned)
			}
			if w.jobs.Finds() < 1 {
				t.Error("the job service was never asked for the dead tick's run")
			}
			if len(dead) == 1 && (!retry.Reconciled || retry.RunID != dead[0].ID) {
				t.Errorf("retry: %+v, want the dead run's %s, reconciled", retry, dead[0].ID)
			}
			if len(dead) == 0 && retry.Reconciled {
				t.Errorf("retry: %+v, want a new run: the dead one never ran the job", retry)
			}
			if next, err := fn.tick(tickAt(5)); err != nil || next.Status != StatusRan {
				t.Errorf("the next tick: %+v, %v; want a run", next, err)
			}
			if again, err := fn.tick(tickAt(0)); err != nil || again.RunID != retry.RunID || !again.Replayed {
				t.Errorf("a later retry: %+v, %v; want %s replayed", again, err, retry.RunID)
			}
			if n := w.jobs.RunsOf(t0); n != 1 {
				t.Errorf("the dead tick ran %d times, want 1", n)
			}
			t.Logf("uncertain, %s: the retry answered %v after the dead run's deadline, after %d refusals and %d lookups; reconciled: %v; runs of the dead tick: %d",
				tt.name, a.at.Sub(deadline).Round(10*time.Millisecond), a.refusals, w.jobs.Finds(), retry.Reconciled, w.jobs.RunsOf(t0))
		})
	}
}
