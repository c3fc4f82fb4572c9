package sim

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file is how requests reach the function, by each source's rules:
//
//   - SQS (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html):
//     a received message becomes visible again when its visibility timeout
//     ends, unless the function succeeded and it was deleted, even while
//     an invocation still works on it; after maxReceiveCount receives it
//     goes to the dead-letter queue. A standard queue delivers at least
//     once: now and then a second copy, at about the same time.
//   - API Gateway: the client waits up to its own timeout, and retries
//     after an error or a timeout with backoff, a few times; the first
//     invocation goes on meanwhile (API Gateway does not stop it).
//   - Lambda's asynchronous invocation
//     (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html):
//     on an error or a timeout, two more attempts, about one and two
//     minutes later; and, rarely, one event delivered twice.

// start schedules the plan's requests and the store's own events.
func (w *world) start() {
	for i := range w.plan.requests {
		q := &w.plan.requests[i]
		w.schedule(epoch.Add(q.at), func() { w.send(q) })
	}
	for _, o := range w.plan.outages {
		if w.cfg.regions > 1 {
			w.s.at(epoch.Add(o.at), func() {
				if w.trace != nil {
					w.trace.log(nil, "Region %d goes down for %v", o.region, o.length)
				}
				w.outages = append(w.outages, o)
			})
			w.s.at(epoch.Add(o.at+o.length), func() {
				if w.trace != nil {
					w.trace.log(nil, "Region %d is back", o.region)
				}
				for i, x := range w.outages {
					if x == o {
						w.outages = append(w.outages[:i], w.outages[i+1:]...)
						break
					}
				}
			})
		}
	}
	w.store.start(w)
}

// schedule runs fn at t as traffic: the probes wait until none is left.
func (w *world) schedule(t time.Time, fn func()) {
	w.traffic++
	w.s.at(t, func() {
		fn()
		w.settle()
	})
}

// deliver invokes the function with q as its delivery n, counted as
// traffic until it ends; then(err) says how.
func (w *world) deliver(q *request, n int, then func(err error)) {
	w.traffic++
	w.invoke(q, n, q.region, func(err error) {
		then(err)
		w.settle()
	})
}

// settle counts one piece of traffic done; when none is left, the probes
// are sent.
func (w *world) settle() {
	w.traffic--
	if w.traffic == 0 && !w.probed {
		w.probed = true
		w.probeAll()
	}
}

func (w *world) send(q *request) {
	r := rand.New(rand.NewPCG(w.plan.seed, uint64(q.id)<<16|0xffff))
	switch q.source {
	case sourceSQS:
		w.sqs(q, r)
	case sourceAPI:
		w.api(q, r)
	case sourceAsync:
		w.async(q, r)
	}
}

func (w *world) sqs(q *request, r *rand.Rand) {
	receives, deleted := 0, false
	var receive func()
	receive = func() {
		if deleted || receives >= w.cfg.maxReceives {
			return
		}
		receives++
		w.deliver(q, receives, func(err error) {
			if err == nil {
				deleted = true
			}
		})
		// Visible again at the end of the visibility timeout, whatever the
		// invocation is doing by then.
		w.schedule(w.s.now.Add(w.cfg.visibility), receive)
	}
	receive()
	if r.Float64() < w.cfg.duplicate {
		w.schedule(w.s.now.Add(latency(r, 0, 2000)), receive)
	}
}

func (w *world) api(q *request, r *rand.Rand) {
	attempts := 0
	var try func()
	try = func() {
		attempts++
		n, answered := attempts, false
		retry := func() {
			if attempts == n && attempts < w.cfg.clientAttempts {
				w.schedule(w.s.now.Add(time.Duration(100<<n)*time.Millisecond+latency(r, 0, 200)), try)
			}
		}
		w.deliver(q, n, func(err error) {
			if answered {
				return // the client gave up on this one
			}
			answered = true
			if err != nil && !final(err) {
				retry()
			}
		})
		w.schedule(w.s.now.Add(w.cfg.clientTimeout), func() {
			if !answered {
				answered = true
				retry()
			}
		})
	}
	try()
}

// final reports whether an API client stops at err: a 4xx that a retry
// cannot change.
func final(err error) bool {
	_, conflict := errors.AsType[*idempotency.PayloadConflictError](err)
	return conflict
}

func (w *world) async(q *request, r *rand.Rand) {
	delays := []time.Duration{0, time.Minute, 2 * time.Minute}
	var attempt func(n int)
	attempt = func(n int) {
		w.deliver(q, n, func(err error) {
			if err != nil && n < len(delays) {
				w.schedule(w.s.now.Add(delays[n]+latency(r, 0, 10000)), func() { attempt(n + 1) })
			}
		})
	}
	w.schedule(w.s.now.Add(latency(r, 0, 500)), func() { attempt(1) })
	if r.Float64() < w.cfg.duplicate/4 {
		w.schedule(w.s.now.Add(latency(r, 0, 2000)), func() { w.deliver(q, 10, func(error) {}) })
	}
}

// probeAll sends, once every lease of the schedule has ended and every
// abandoned record's grace has passed, one more request per order, with
// no fault: its answer must not be that the key is still in progress
// (see checker.returned), and if it runs the handler the effect is
// judged like any other.
func (w *world) probeAll() {
	wait := w.cfg.timeout + w.cfg.leaseBeyond + idempotency.AbandonGrace + w.cfg.maxSkew + time.Second
	seen := map[int]bool{}
	for _, q := range w.plan.requests {
		if seen[q.order] {
			continue
		}
		seen[q.order] = true
		probe := &request{id: probeRequest + q.order, source: q.source, order: q.order, amount: q.amount, region: q.region}
		w.s.after(wait, func() { w.invoke(probe, 1, probe.region, func(error) {}) })
	}
}
