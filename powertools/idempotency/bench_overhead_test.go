package idempotency_test

import (
	"context"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// overheadBlock is how many calls of one kind the overhead benchmark
// makes before it switches to the other: long enough that reading the CPU
// clock twice per block costs little, short enough (a few milliseconds)
// that a change in the machine's load falls on both kinds alike.
const overheadBlock = 64

// BenchmarkMiddlewareOverhead measures what the middleware adds to the bare
// handler on the 2.2 KB event, directly: one loop alternates blocks of bare
// calls and of wrapped calls, and reports the CPU time per call of each
// (bare-cpu-ns/op, wrapped-cpu-ns/op) and their difference
// (overhead-cpu-ns/op). The middleware's benchmark runs the two as separate
// benchmarks, seconds apart; on a shared machine the load changes in
// between by more than the few microseconds being measured.
//
// The garbage both kinds make is collected whenever the runtime decides, so
// each block pays for some of the other's; over many blocks that evens out.
// ns/op is the mean of both kinds; the middleware's benchmark gives the
// allocations of each.
func BenchmarkMiddlewareOverhead(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	for _, path := range []string{"first_call", "first_call_steady", "replay"} {
		b.Run(path, func(b *testing.B) {
			event, setOrder := benchEvent(b)
			bare := func() { bareCall(b, ctx, event) }
			var h *idempotency.Handler
			tick, order := func() {}, func(i int) int { return i }
			switch path {
			case "first_call":
				h = idempotency.Wrap(idempotencytest.NewStore(), orderHandler,
					idempotency.WithKeyPrefix("orders"), idempotency.WithEventKey(benchKey), idempotency.WithPayloadValidation(benchValidation))
			case "first_call_steady":
				h, tick = steadyHandler(orderHandler, benchKey, idempotency.WithPayloadValidation(benchValidation))
				order = func(i int) int { return i % steadyKeys }
			case "replay":
				h = idempotency.Wrap(idempotencytest.NewStore(), orderHandler,
					idempotency.WithKeyPrefix("orders"), idempotency.WithEventKey(benchKey), idempotency.WithPayloadValidation(benchValidation))
				order = func(int) int { return 1 }
				setOrder(1)
				if _, err := h.Invoke(ctx, event); err != nil {
					b.Fatal(err)
				}
			}
			wrapped := func() {
				tick()
				if _, err := h.Invoke(ctx, event); err != nil {
					b.Fatal(err)
				}
			}

			// Each iteration is one call; the kinds take turns by blocks,
			// and each kind gets every order_id in turn, so both decode
			// the same events.
			var cpu [2]time.Duration // bare, wrapped
			var calls, next [2]int
			start, ok := processCPU()
			for i := 0; b.Loop(); i++ {
				kind := (i / overheadBlock) % 2
				setOrder(order(next[kind]))
				next[kind]++
				if kind == 0 {
					bare()
				} else {
					wrapped()
				}
				if i%overheadBlock == overheadBlock-1 {
					end, ok2 := processCPU()
					ok = ok && ok2
					cpu[kind] += end - start
					calls[kind] += overheadBlock
					start = end
				}
			}
			if !ok || calls[1] == 0 {
				return
			}
			perCall := func(kind int) float64 { return float64(cpu[kind]) / float64(calls[kind]) }
			b.ReportMetric(perCall(0), "bare-cpu-ns/op")
			b.ReportMetric(perCall(1), "wrapped-cpu-ns/op")
			b.ReportMetric(perCall(1)-perCall(0), "overhead-cpu-ns/op")
		})
	}
}
