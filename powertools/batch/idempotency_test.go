package batch_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/batch"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// orderEvent builds SQS messages whose bodies carry the given order ids.
func orderEvent(msgIDs, orderIDs []string) events.SQSEvent {
	var ev events.SQSEvent
	for i, id := range msgIDs {
		body, _ := json.Marshal(order{OrderID: orderIDs[i], Amount: 100})
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: id, Body: string(body), EventSourceARN: standardARN})
	}
	return ev
}

// effects counts the runs of the wrapped effect per order id and records
// the idempotency key each run saw. The first run of order hold waits
// until meet duplicates have been turned away with an InProgressError
// (each reported on turnedAway), so that concurrent duplicates meet.
type effects struct {
	mu         sync.Mutex
	runs       map[string]int
	keys       map[string]string
	hold       string
	meet       int
	turnedAway chan struct{}
}

func (e *effects) fn(ctx context.Context, o order) (string, error) {
	key, _ := idempotency.KeyFromContext(ctx)
	e.mu.Lock()
	first := e.runs[o.OrderID] == 0
	e.mu.Unlock()
	if o.OrderID == e.hold && first {
		timeout := time.After(10 * time.Second)
		for range e.meet {
			select {
			case <-e.turnedAway:
			case <-timeout:
				return "", errors.New("the duplicates never arrived")
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.runs[o.OrderID]++
	e.keys[o.OrderID] = key
	return "done-" + o.OrderID, nil
}

func TestIdempotentRecords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		concurrency int
		batches     [][2][]string // message ids, order ids
		// The first run of order hold waits until meet of its duplicates
		// have been turned away.
		hold string
		meet int
	}{
		{
			name:    "same order twice in one batch",
			batches: [][2][]string{{{"m1", "m2", "m3"}, {"o1", "o2", "o1"}}},
		},
		{
			name: "same order in two batches",
			batches: [][2][]string{
				{{"m1", "m2"}, {"o1", "o2"}},
				{{"m3", "m4"}, {"o2", "o3"}},
			},
		},
		{
			name: "same order at once, then redelivered", concurrency: 4,
			batches: [][2][]string{
				{{"m1", "m2", "m3", "m4"}, {"o1", "o1", "o1", "o2"}},
				{{"m2", "m3"}, {"o1", "o1"}}, // what Lambda hands back
			},
			hold: "o1", meet: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := &effects{runs: map[string]int{}, keys: map[string]string{}, hold: tt.hold, meet: tt.meet, turnedAway: make(chan struct{}, 16)}
			store := idempotencytest.NewStore()
			apply := idempotency.WrapFunc("apply", store, fx.fn, idempotency.WithEventKey("order_id"))
			p, _ := batch.New(batch.WithConcurrency(max(tt.concurrency, 1)), quiet())
			handle := func(ctx context.Context, msg events.SQSMessage) error {
				var o order
				if err := json.Unmarshal([]byte(msg.Body), &o); err != nil {
					return err
				}
				_, err := apply(ctx, o)
				if errors.As(err, new(*idempotency.InProgressError)) {
					fx.turnedAway <- struct{}{}
				}
				return err
			}
			var failed []string
			for _, b := range tt.batches {
				res := p.SQS(context.Background(), orderEvent(b[0], b[1]), handle)
				for _, f := range res.Failures {
					// Only a concurrent duplicate may fail, and only because
					// its twin holds the lease: Lambda redelivers it.
					if !errors.As(f, new(*idempotency.InProgressError)) {
						t.Errorf("%s failed: %v", f.ID, f.Err)
					}
					failed = append(failed, f.ID)
				}
			}
			for id, n := range fx.runs {
				if n != 1 {
					t.Errorf("order %s ran %d times, want once", id, n)
				}
			}
			var orders []string
			for _, b := range tt.batches {
				orders = append(orders, b[1]...)
			}
			slices.Sort(orders)
			if len(fx.runs) != len(slices.Compact(orders)) {
				t.Errorf("ran orders %v, want each of %v", fx.runs, orders)
			}
			for id, key := range fx.keys {
				if key == "" {
					t.Errorf("order %s ran without an idempotency key in its context", id)
				}
			}
			if len(failed) != tt.meet {
				t.Errorf("failures %v, want the %d duplicates turned away while their twin held the lease", failed, tt.meet)
			}
		})
	}
}
