// Command simulate runs the idempotency simulator (internal/testing/sim): seeded
// schedules of the real engine on modelled stores, judged by invariants.
//
//	go run ./internal/testing/sim/cmd/simulate -seeds 10000 -store all
//	go run ./internal/testing/sim/cmd/simulate -seed 42 -store dynamo -v
//
// It exits with status 1 when a schedule breaks an invariant outside the
// documented limits, after printing its seed, the command that replays
// it, and its shortened trace. docs/simulation.md describes it.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/gopowertools/lambda/internal/testing/sim"
)

func main() {
	seeds := flag.Int("seeds", 1000, "how many seeds to run, per store")
	first := flag.Uint64("first", 1, "the first seed of -seeds")
	seed := flag.Uint64("seed", 0, "replay this one seed")
	store := flag.String("store", "all", "dynamo, redis, global-eventual, global-strong or all")
	verbose := flag.Bool("v", false, "print the trace (with -seed), or every excused violation")
	redisWait := flag.Int("redis-wait", 0, "redis's WaitReplicas for the Redis schedules: 0 (the default, no WAIT), 1, or -1 to draw it per seed")
	leaseBeyond := flag.Bool("lease-beyond-skew", false, "set WithLeaseBeyondDeadline to each schedule's largest clock skew")
	noShrink := flag.Bool("no-shrink", false, "report a failing schedule as it is, without shortening it")
	stop := flag.Bool("stop", false, "stop at the first schedule that breaks an invariant")
	flag.Parse()
	// Each schedule allocates a few hundred kilobytes and keeps none of
	// it: collecting less often buys about a fifth of the time.
	debug.SetGCPercent(400)

	var stores []sim.Store
	if *store == "all" {
		stores = sim.Stores
	} else {
		stores = []sim.Store{sim.Store(*store)}
	}
	o := sim.Options{RedisWait: *redisWait, LeaseBeyondSkew: *leaseBeyond}

	if *seed != 0 {
		failed := false
		for _, st := range stores {
			o.Trace = *verbose
			r := sim.Run(*seed, st, o)
			fmt.Printf("seed %d on %s\n%s", r.Seed, r.Store, r.Plan)
			for _, line := range r.Trace {
				fmt.Println(line)
			}
			report(r)
			failed = failed || r.Failed()
		}
		if failed {
			os.Exit(1)
		}
		return
	}

	failed := false
	for _, st := range stores {
		start := time.Now()
		var total sim.Stats
		var failures []sim.Result
		excused := map[string][]uint64{}      // a few seeds per limit
		schedules := map[string]int{}         // how many schedules show it
		broken := map[string]map[string]int{} // per limit, the schedules per invariant
		for s := *first; s < *first+uint64(*seeds); s++ {
			r := sim.Run(s, st, o)
			total.Add(r.Stats)
			if r.Failed() {
				failures = append(failures, r)
				if *stop {
					break
				}
			}
			seen := map[string]bool{}
			for _, v := range r.Violations {
				if v.Limit != "" && !seen[v.Limit+v.Invariant] {
					seen[v.Limit+v.Invariant] = true
					if broken[v.Limit] == nil {
						broken[v.Limit] = map[string]int{}
					}
					broken[v.Limit][v.Invariant]++
				}
				if v.Limit == "" || seen[v.Limit] {
					continue
				}
				seen[v.Limit] = true
				schedules[v.Limit]++
				if len(excused[v.Limit]) < 5 {
					excused[v.Limit] = append(excused[v.Limit], s)
				}
			}
		}
		took := time.Since(start)
		fmt.Printf("%s: %d schedules in %v (%.0f a minute): %d invocations, %d effects, %d fenced takeovers, %d reruns after expiry, %d crashes, %d timeouts; violations: %d, within documented limits: %d\n",
			st, total.Schedules, took.Round(time.Millisecond), float64(total.Schedules)/took.Minutes(),
			total.Invocations, total.Effects, total.FencedTakeovers, total.RerunsAfterExpiry, total.Crashes, total.Timeouts, total.Violations, total.Excused)
		for _, limit := range slices.Sorted(maps.Keys(excused)) {
			fmt.Printf("  documented limit %q: %d schedules (by invariant: %v), e.g. seeds %v\n", limit, schedules[limit], broken[limit], excused[limit])
		}
		for i, r := range failures {
			if i == 3 {
				fmt.Printf("  ... and %d more failing seeds\n", len(failures)-3)
				break
			}
			if !*noShrink {
				r = sim.Shrink(r, o)
			}
			report(r)
			if r.Shrunk {
				fmt.Printf("  shortened to %d requests and outages:\n", r.Steps)
				for line := range strings.Lines(r.Plan) {
					fmt.Print("    " + line)
				}
			}
			for _, line := range r.Trace {
				fmt.Println("    " + line)
			}
		}
		failed = failed || len(failures) > 0
	}
	if failed {
		os.Exit(1)
	}
}

func report(r sim.Result) {
	for _, v := range r.Violations {
		fmt.Printf("  seed %d: %s\n", r.Seed, v)
	}
	if r.Failed() {
		fmt.Printf("  replay: %s\n", r.Replay())
	}
}
