package sim

import (
	"fmt"
	"strings"
	"testing"
)

// seedBudget is how many schedules go test runs per store: a fixed
// budget that keeps the package's test time reasonable under -race (see
// docs/simulation.md). The command runs as many as asked.
const seedBudget = 2000

// TestSchedules runs seedBudget schedules on each store and fails on any
// violation outside the documented limits, with the seed, the command
// that replays it, and its shortened trace.
func TestSchedules(t *testing.T) {
	for _, store := range Stores {
		t.Run(string(store), func(t *testing.T) {
			t.Parallel()
			budget := seedBudget
			if testing.Short() {
				budget /= 10
			}
			var total Stats
			for seed := uint64(1); seed <= uint64(budget); seed++ {
				r := Run(seed, store, Options{RedisWait: -1})
				total.Add(r.Stats)
				if r.Failed() {
					t.Error(failure(Shrink(r, Options{RedisWait: -1})))
				}
			}
			t.Logf("%d schedules: %d invocations, %d effects, %d fenced takeovers, %d reruns after expiry, %d crashes, %d timeouts, %d violations within documented limits",
				total.Schedules, total.Invocations, total.Effects, total.FencedTakeovers, total.RerunsAfterExpiry, total.Crashes, total.Timeouts, total.Excused)
		})
	}
}

// failure is the report of a failing schedule.
func failure(r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d on %s broke an invariant; replay it with\n\t%s\n", r.Seed, r.Store, r.Replay())
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "\t%s\n", v)
	}
	b.WriteString(r.Plan)
	for _, line := range r.Trace {
		b.WriteString("\t" + line + "\n")
	}
	return b.String()
}

func BenchmarkSchedule(b *testing.B) {
	for _, store := range Stores {
		b.Run(string(store), func(b *testing.B) {
			for i := range b.N {
				Run(uint64(i+1), store, Options{})
			}
		})
	}
}
