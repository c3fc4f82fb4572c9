package sim

import "maps"

// This file shortens a failing schedule: it removes the plan's requests
// and outages one at a time, and turns off the faults and crash of one
// invocation at a time, keeping each change after which the schedule
// still breaks an invariant outside the documented limits, until no
// change does. Each invocation draws from a source of its own, so
// removing one request leaves the others' latencies, faults and crashes
// as they were, and what is left is most often the few
// invocations that matter.

// maxShrinkRuns bounds the schedules one shrink runs.
const maxShrinkRuns = 2000

// Shrink returns r's schedule shortened, with its trace. r must have
// failed; a schedule that does not fail is returned as it is.
func Shrink(r Result, o Options) Result {
	if !r.Failed() || r.plan == nil {
		return r
	}
	p := clonePlan(r.plan)
	runs := 0
	fails := func(q *plan) (Result, bool) {
		runs++
		res := runPlan(clonePlan(q), false)
		return res, res.Failed()
	}
	last := r
	for changed := true; changed && runs < maxShrinkRuns; {
		changed = false
		for i := len(p.requests) - 1; i >= 0 && runs < maxShrinkRuns; i-- {
			q := clonePlan(p)
			q.requests = append(q.requests[:i:i], q.requests[i+1:]...)
			if res, ok := fails(q); ok {
				p, last, changed = q, res, true
			}
		}
		for i := len(p.outages) - 1; i >= 0 && runs < maxShrinkRuns; i-- {
			q := clonePlan(p)
			q.outages = append(q.outages[:i:i], q.outages[i+1:]...)
			if res, ok := fails(q); ok {
				p, last, changed = q, res, true
			}
		}
		for _, id := range last.ran {
			if p.quiet[id] || runs >= maxShrinkRuns {
				continue
			}
			q := clonePlan(p)
			q.quiet[id] = true
			if res, ok := fails(q); ok {
				p, last, changed = q, res, true
			}
		}
	}
	out := runPlan(clonePlan(p), true)
	out.Shrunk = true
	return out
}

func clonePlan(p *plan) *plan {
	q := *p
	q.requests = append([]request(nil), p.requests...)
	q.outages = append([]outage(nil), p.outages...)
	q.quiet = maps.Clone(p.quiet)
	return &q
}
