package main

import (
	"math"
	"testing"
	"time"
)

// waitEnv turns waiting on (WithWaitForInProgress) in both scopes.
const waitEnv = "POWERTOOLS_IDEMPOTENCY_WAIT_FOR_IN_PROGRESS=true"

// sleep is how long the job service holds the first run while a second
// invocation arrives.
const sleep = 3 * time.Second

// The waiting duplicate reads the record after 50 ms, then after twice as
// long each time, give or take a quarter (docs/in-progress.md).
const firstPoll, pollJitter = 50 * time.Millisecond, 1.25

// lastPoll bounds the wait before the last of reads reads, which is the
// longest a waiting invocation can miss the record's completion by.
func lastPoll(reads int) time.Duration {
	return time.Duration(pollJitter * float64(firstPoll) * math.Pow(2, float64(reads-1)))
}

// maxReads bounds the reads of a wait that lasted waited: each wait is at
// least three quarters of twice the one before.
func maxReads(waited time.Duration) int {
	return int(math.Log2(float64(waited)/(0.75*float64(firstPoll)))) + 2
}

// slack covers what the bounds leave out: the invocation's own round trip
// through the emulator, and a loaded machine.
const slack = time.Second

func TestE2ERetryOfATickReplays(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fn := w.sandbox(20 * time.Second)
	first, err := fn.tick(tickAt(0))
	if err != nil || first.Status != StatusRan {
		t.Fatalf("first delivery: %+v, %v; want a run", first, err)
	}
	// Scheduler's retry, then the same tick as a scheduled rule's event
	// would bring it (the job from JOB_NAME), from another environment.
	want := first
	want.Replayed = true
	other := w.sandbox(20 * time.Second)
	for _, e := range []Event{tickAt(0), {Time: "2026-03-01T04:00:00+00:00"}} {
		if again, err := other.tick(e); err != nil || again != want {
			t.Errorf("retry %+v: %+v, %v; want %+v", e, again, err, want)
		}
	}
	if n := len(w.jobs.Runs()); n != 1 {
		t.Errorf("the job ran %d times, want 1", n)
	}
	if lock := w.lock(); lock != nil {
		t.Errorf("the job lock is %s after the run, want it released", lock.Status)
	}
}

// TestE2EDuplicateTickWaitsForTheFirst is the proof of waiting: two
// execution environments get the same tick, the second while the first's
// run sleeps. The second waits, returns the first's result no later than
// one poll interval after the first ends, and reads the record a number of
// times that grows with the log of its wait. The job runs once.
func TestE2EDuplicateTickWaitsForTheFirst(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	first, second := w.sandbox(20*time.Second, waitEnv), w.sandbox(20*time.Second, waitEnv)
	warm(t, first, second)
	release := w.jobs.Hold()
	defer release()

	start := time.Now()
	firstDone := make(chan answer, 1)
	go func() {
		res, err := first.tick(tickAt(0))
		firstDone <- answer{res: res, err: err, at: time.Now()}
	}()
	<-w.jobs.arrived
	w.proxy.ResetCounts() // from here on, the GetItems are the second's
	time.AfterFunc(sleep, release)
	secondStart := time.Now()
	dup, err := second.tick(tickAt(0))
	secondEnd := time.Now()
	a := <-firstDone

	if a.err != nil || a.res.Status != StatusRan {
		t.Fatalf("first: %+v, %v; want a run", a.res, a.err)
	}
	want := a.res
	want.Replayed = true
	if err != nil || dup != want {
		t.Fatalf("second: %+v, %v; want the first's result, replayed: %+v", dup, err, want)
	}
	reads := w.proxy.Counts().Requests["GetItem"]
	waited, firstRan := secondEnd.Sub(secondStart), a.at.Sub(start)
	if reads < 1 || reads > maxReads(waited) {
		t.Errorf("the second read the record %d times in %v, want 1 to %d", reads, waited, maxReads(waited))
	}
	if waited > firstRan+lastPoll(reads)+slack {
		t.Errorf("the second waited %v, more than the first's %v, one poll interval (%v) and %v", waited, firstRan, lastPoll(reads), slack)
	}
	if late := secondEnd.Sub(a.at); late > lastPoll(reads)+slack {
		t.Errorf("the second answered %v after the first, more than one poll interval (%v) and %v", late, lastPoll(reads), slack)
	}
	if n := len(w.jobs.Runs()); n != 1 {
		t.Errorf("the job ran %d times, want 1", n)
	}
	t.Logf("first ran %v; the second waited %v, answered %v after the first, with %d GetItem (at most %d; last poll interval at most %v)",
		firstRan.Round(10*time.Millisecond), waited.Round(10*time.Millisecond), secondEnd.Sub(a.at).Round(10*time.Millisecond),
		reads, maxReads(waited), lastPoll(reads).Round(time.Millisecond))
}

// While a run holds the job, the next tick, in another environment, is
// refused at once (skipped until the run's deadline), or with waiting on
// waits for the run to end and then runs. Runs never overlap.
func TestE2ENextTickWhileTheJobRuns(t *testing.T) {
	t.Parallel()
	for _, wait := range []bool{false, true} {
		name := map[bool]string{false: "refused", true: "waits"}[wait]
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			var env []string
			if wait {
				env = append(env, waitEnv)
			}
			first, second := w.sandbox(20*time.Second, env...), w.sandbox(20*time.Second, env...)
			warm(t, first, second)
			release := w.jobs.Hold()
			defer release()
			firstDone := make(chan answer, 1)
			go func() {
				res, err := first.tick(tickAt(0))
				firstDone <- answer{res: res, err: err, at: time.Now()}
			}()
			<-w.jobs.arrived
			lock := w.lock()
			w.proxy.ResetCounts()
			time.AfterFunc(sleep, release)
			secondStart := time.Now()
			next, err := second.tick(tickAt(5))
			secondEnd := time.Now()
			a := <-firstDone
			if a.err != nil || a.res.Status != StatusRan {
				t.Fatalf("first: %+v, %v; want a run", a.res, a.err)
			}
			reads := w.proxy.Counts().Requests["GetItem"]
			if !wait {
				if err != nil || next.Status != StatusSkipped || !next.BusyUntil.Equal(lock.LeaseEnd) {
					t.Fatalf("next tick: %+v, %v; want skipped until the run's deadline %v", next, err, lock.LeaseEnd)
				}
				if !secondEnd.Before(a.at) || reads != 0 {
					t.Errorf("the next tick answered %v after the run ended, with %d GetItem; want at once, with none",
						secondEnd.Sub(a.at), reads)
				}
				if again, err := second.tick(tickAt(5)); err != nil || again.Status != StatusSkipped || !again.Replayed {
					t.Errorf("retry of the skipped tick after the run: %+v, %v; want the skip replayed", again, err)
				}
			} else {
				if err != nil || next.Status != StatusRan {
					t.Fatalf("next tick: %+v, %v; want a run after the first", next, err)
				}
				if reads < 1 || reads > maxReads(secondEnd.Sub(secondStart)) {
					t.Errorf("the next tick read the lock %d times in %v, want 1 to %d", reads, secondEnd.Sub(secondStart), maxReads(secondEnd.Sub(secondStart)))
				}
				// It runs after the first, no later than one poll interval
				// after it and its own run, which is not held.
				if late := secondEnd.Sub(a.at); late > lastPoll(reads)+slack {
					t.Errorf("the next tick answered %v after the first, more than one poll interval (%v) and %v", late, lastPoll(reads), slack)
				}
			}
			runs := w.jobs.Runs()
			if want := map[bool]int{false: 1, true: 2}[wait]; len(runs) != want || !runs[0].Tick.Equal(timeOf(t, tickAt(0))) {
				t.Errorf("runs %+v, want %d, the first the tick at :00", runs, want)
			}
			if w.jobs.Overlapped() {
				t.Error("two runs of the job overlapped")
			}
			t.Logf("%s: the next tick answered %s in %v; the first run ended %v after it was sent; %d GetItem",
				name, next.Status, secondEnd.Sub(secondStart).Round(10*time.Millisecond), a.at.Sub(secondStart).Round(10*time.Millisecond), reads)
		})
	}
}
