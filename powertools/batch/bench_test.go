package batch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/batch"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

const benchRecords = 10

// BenchmarkSQS measures the batch path on a 10-record SQS event: decode
// each body, and (idempotent cases) run the effect through
// idempotency.WrapFunc keyed on order_id over the in-memory store. It
// reports ns and allocations per record next to the per-event figures.
//
//   - engine: the record function does nothing: the batch machinery alone.
//   - plain: decode the body, no idempotency.
//   - idempotent/first: every record is new (the clock moves past the
//     records' expiry between events): acquire, effect, complete.
//   - idempotent/repeat: every record is a repeat: one read of the stored
//     record and a replay, no effect.
func BenchmarkSQS(b *testing.B) {
	ev := benchEvent()
	for _, conc := range []int{1, 4} {
		b.Run(fmt.Sprintf("engine/concurrency=%d", conc), func(b *testing.B) {
			benchBatch(b, ev, conc, nil)
		})
		b.Run(fmt.Sprintf("plain/concurrency=%d", conc), func(b *testing.B) {
			benchBatch(b, ev, conc, func(ctx context.Context, o order) (string, error) { return o.OrderID, nil })
		})
		for _, mode := range []string{"first", "repeat"} {
			b.Run(fmt.Sprintf("idempotent/%s/concurrency=%d", mode, conc), func(b *testing.B) {
				var tick atomic.Int64
				base := time.Now()
				clock := func() time.Time {
					if mode == "first" {
						return base.Add(time.Duration(tick.Load()) * 2 * time.Hour)
					}
					return base
				}
				effect := idempotency.WrapFunc("bench", idempotencytest.NewStore(),
					func(ctx context.Context, o order) (string, error) { return "done-" + o.OrderID, nil },
					idempotency.WithEventKey("order_id"), idempotency.WithClock(clock), idempotency.WithExpiresAfter(time.Hour))
				benchBatch(b, ev, conc, func(ctx context.Context, o order) (string, error) {
					return effect(ctx, o)
				}, &tick)
			})
		}
	}
}

func benchEvent() events.SQSEvent {
	var ev events.SQSEvent
	for i := range benchRecords {
		body, _ := json.Marshal(map[string]any{"order_id": fmt.Sprintf("o-%d", i), "customer": "c-1", "amount": 100 + i, "currency": "EUR"})
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: fmt.Sprintf("059f36b4-87a3-44ab-83d2-66197564%04d", i), Body: string(body),
			EventSourceARN: standardARN, Attributes: map[string]string{"ApproximateReceiveCount": "1"},
		})
	}
	return ev
}

func benchBatch(b *testing.B, ev events.SQSEvent, conc int, effect func(context.Context, order) (string, error), tick ...*atomic.Int64) {
	p, _ := batch.New(batch.WithConcurrency(conc), quiet())
	fn := func(ctx context.Context, msg events.SQSMessage) error {
		if effect == nil {
			return nil
		}
		var o order
		if err := json.Unmarshal([]byte(msg.Body), &o); err != nil {
			return err
		}
		_, err := effect(ctx, o)
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour) // as in Lambda: a deadline
	defer cancel()
	// One event first, so that "repeat" measures replays only.
	if res := p.SQS(ctx, ev, fn); len(res.Failures) != 0 {
		b.Fatal(res.Failures)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, t := range tick {
			t.Add(1)
		}
		if res := p.SQS(ctx, ev, fn); len(res.Failures) != 0 {
			b.Fatal(res.Failures)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	records := float64(b.N * benchRecords)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/records, "ns/record")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/records, "allocs/record")
}
