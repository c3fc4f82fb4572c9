package sim

import (
	"fmt"
	"math/rand/v2"
)

// Options change how schedules are drawn and run.
type Options struct {
	// RedisWait sets redis's WaitReplicas for the Redis schedules:
	// 0 is today's default (no WAIT), 1 waits for the replica; -1 draws
	// it per seed.
	RedisWait int
	// LeaseBeyondSkew raises WithLeaseBeyondDeadline to the schedule's
	// largest clock skew: the setting docs/reliability.md advises when
	// clocks may disagree by more than the lease can spare.
	LeaseBeyondSkew bool
	// Trace keeps the trace of each schedule.
	Trace bool
}

// Result is what one schedule did.
type Result struct {
	Seed       uint64
	Store      Store
	Plan       string
	Violations []Violation
	Stats      Stats
	Trace      []string
	// Steps is the size of the schedule: its requests and outages, what
	// shrinking makes fewer.
	Steps int
	// Shrunk reports that the schedule was shortened (see Shrink).
	Shrunk bool

	plan *plan
	ran  []invocationID
}

// Failed reports whether the schedule broke an invariant outside the
// documented limits.
func (r Result) Failed() bool {
	for _, v := range r.Violations {
		if v.Limit == "" {
			return true
		}
	}
	return false
}

// Replay is the command that replays the schedule, with its trace.
func (r Result) Replay() string {
	return fmt.Sprintf("go run ./internal/testing/sim/cmd/simulate -seed %d -store %s -v", r.Seed, r.Store)
}

// Run runs the schedule of seed on store.
func Run(seed uint64, store Store, o Options) Result {
	return runPlan(newPlan(seed, store, o.plan()), o.Trace)
}

func (o Options) plan() options {
	return options{redisWait: o.RedisWait, leaseBeyond: o.LeaseBeyondSkew}
}

func runPlan(p *plan, trace bool) Result {
	start := clonePlan(p)
	w := &world{plan: p, cfg: &p.cfg, keys: map[int]string{}}
	w.s = newScheduler(epoch, rand.New(rand.NewPCG(p.seed, 1)))
	if trace {
		w.trace = &tracer{w: w}
	}
	w.check = newChecker(w)
	w.down = &downstream{w: w, effects: map[string][]downEffect{}}
	w.idle = make([][]*sandbox, p.cfg.regions)
	switch p.cfg.store {
	case StoreRedis:
		w.store = newRedisWorld()
	default:
		w.store = newDynamoWorld(p.cfg.store, p.cfg.regions)
	}
	w.start()
	w.s.run()
	if w.s.failure != nil {
		w.check.fail("%v", w.s.failure)
	}
	res := Result{Seed: p.seed, Store: p.cfg.store, Plan: p.String(), Violations: w.check.violations, Stats: w.check.stats, plan: start}
	for _, inv := range w.invocations {
		res.ran = append(res.ran, inv.id)
	}
	res.Stats.Schedules = 1
	res.Stats.Invocations = len(w.invocations)
	for _, v := range res.Violations {
		if v.Limit == "" {
			res.Stats.Violations++
		} else {
			res.Stats.Excused++
		}
	}
	res.Steps = len(p.requests) + len(p.outages)
	if w.trace != nil {
		res.Trace = w.trace.lines
	}
	return res
}
