package batch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/batch"
)

const (
	standardARN = "arn:aws:sqs:us-east-1:123456789012:orders"
	fifoARN     = "arn:aws:sqs:us-east-1:123456789012:orders.fifo"
)

var errBoom = errors.New("boom")

// sqsEvent builds an event from "id" or "id@group" specs.
func sqsEvent(arn string, specs ...string) events.SQSEvent {
	ev := events.SQSEvent{Records: []events.SQSMessage{}} // no specs: an empty batch
	for _, s := range specs {
		id, group, _ := strings.Cut(s, "@")
		msg := events.SQSMessage{MessageId: id, Body: id, EventSourceARN: arn, Attributes: map[string]string{}}
		if group != "" {
			msg.Attributes["MessageGroupId"] = group
		}
		ev.Records = append(ev.Records, msg)
	}
	return ev
}

// behave returns a record function that fails the ids in fail, panics on
// the ids in panics, and records the ids it ran, in call order.
func behave(fail, panics []string) (batch.SQSFunc, func() []string) {
	var mu sync.Mutex
	var calls []string
	fn := func(_ context.Context, msg events.SQSMessage) error {
		mu.Lock()
		calls = append(calls, msg.MessageId)
		mu.Unlock()
		if slices.Contains(panics, msg.MessageId) {
			panic("poison " + msg.MessageId)
		}
		if slices.Contains(fail, msg.MessageId) {
			return fmt.Errorf("record %s: %w", msg.MessageId, errBoom)
		}
		return nil
	}
	return fn, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(calls)
	}
}

func failedIDs(res *batch.Result) []string {
	var ids []string
	for _, f := range res.Failures {
		ids = append(ids, f.ID)
	}
	return ids
}

func quiet() batch.Option { return batch.WithLogger(discard) }

func TestSQSRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		records    []string
		fail       []string
		panics     []string
		wantFailed []string
		wantAllErr bool
	}{
		{name: "empty batch", records: nil},
		{name: "all succeed", records: []string{"m1", "m2", "m3"}},
		{name: "one fails, others succeed", records: []string{"m1", "m2", "m3"}, fail: []string{"m2"}, wantFailed: []string{"m2"}},
		{name: "a panic fails only its record", records: []string{"m1", "m2", "m3"}, panics: []string{"m1"}, wantFailed: []string{"m1"}},
		{name: "failures in record order", records: []string{"m1", "m2", "m3", "m4"}, fail: []string{"m4", "m1"}, panics: []string{"m3"}, wantFailed: []string{"m1", "m3", "m4"}},
		{name: "all fail", records: []string{"m1", "m2"}, fail: []string{"m1", "m2"}, wantFailed: []string{"m1", "m2"}, wantAllErr: true},
		{name: "all fail, one by panic", records: []string{"m1", "m2"}, fail: []string{"m1"}, panics: []string{"m2"}, wantFailed: []string{"m1", "m2"}, wantAllErr: true},
	}
	for _, tt := range tests {
		for _, conc := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/concurrency=%d", tt.name, conc), func(t *testing.T) {
				fn, calls := behave(tt.fail, tt.panics)
				p, err := batch.New(batch.WithConcurrency(conc), quiet())
				if err != nil {
					t.Fatal(err)
				}
				res := p.SQS(context.Background(), sqsEvent(standardARN, tt.records...), fn)
				if got := failedIDs(res); !slices.Equal(got, tt.wantFailed) {
					t.Errorf("failed = %v, want %v", got, tt.wantFailed)
				}
				if got := calls(); len(got) != len(tt.records) {
					t.Errorf("ran %v, want every record of %v", got, tt.records)
				}
				if res.Total != len(tt.records) {
					t.Errorf("Total = %d, want %d", res.Total, len(tt.records))
				}
				for _, f := range res.Failures {
					if slices.Contains(tt.panics, f.ID) {
						var pe *batch.PanicError
						if !errors.As(f, &pe) || !errors.As(f, new(*batch.PanicError)) || len(pe.Stack) == 0 {
							t.Errorf("%s: error %v is not a *PanicError with a stack", f.ID, f.Err)
						}
					} else if !errors.Is(f, errBoom) {
						t.Errorf("%s: error %v does not wrap the function's error", f.ID, f.Err)
					}
					if f.Index != slices.Index(tt.records, f.ID) {
						t.Errorf("%s: Index = %d", f.ID, f.Index)
					}
				}
				err = res.Err()
				if tt.wantAllErr {
					var be *batch.BatchError
					if !errors.As(err, new(*batch.BatchError)) || !errors.As(err, &be) || len(be.Failures) != len(tt.records) {
						t.Fatalf("Err() = %v, want a *BatchError with every record", err)
					}
					if len(tt.fail) > 0 && !errors.Is(err, errBoom) {
						t.Errorf("Err() = %v does not wrap the per-record errors", err)
					}
				} else if err != nil {
					t.Errorf("Err() = %v, want nil (partial failures are not a batch error)", err)
				}
				resp := res.SQSResponse()
				if len(resp.BatchItemFailures) != len(tt.wantFailed) {
					t.Fatalf("response = %+v", resp)
				}
				for i, id := range tt.wantFailed {
					if resp.BatchItemFailures[i].ItemIdentifier != id {
						t.Errorf("response[%d] = %q, want %q", i, resp.BatchItemFailures[i].ItemIdentifier, id)
					}
				}
			})
		}
	}
}

func TestSQSHandler(t *testing.T) {
	t.Parallel()
	fn, _ := behave([]string{"m2"}, nil)
	h := batch.SQSHandler(fn, quiet())

	resp, err := h(context.Background(), sqsEvent(standardARN, "m1", "m2"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(resp)
	if want := `{"batchItemFailures":[{"itemIdentifier":"m2"}]}`; string(got) != want {
		t.Errorf("response JSON = %s, want %s", got, want)
	}

	resp, err = h(context.Background(), sqsEvent(standardARN, "m1"))
	got, _ = json.Marshal(resp)
	if err != nil || string(got) != `{"batchItemFailures":[]}` {
		t.Errorf("all succeed: %s, %v; want an empty list and no error", got, err)
	}

	if _, err := h(context.Background(), sqsEvent(standardARN, "m2")); !errors.As(err, new(*batch.BatchError)) {
		t.Errorf("all failed: err = %v, want a BatchError so that Lambda retries the batch", err)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for name, opt := range map[string]batch.Option{
		"WithConcurrency":    batch.WithConcurrency(0),
		"WithDeadlineMargin": batch.WithDeadlineMargin(-time.Second),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := batch.New(opt)
			var ce *batch.ConfigError
			if !errors.As(err, &ce) || ce.Name != name || !errors.As(err, new(*batch.ConfigError)) {
				t.Fatalf("New = %v, want *ConfigError for %s", err, name)
			}
			defer func() {
				if v := recover(); !errors.As(v.(error), &ce) {
					t.Errorf("SQSHandler panicked with %v, want *ConfigError", v)
				}
			}()
			fn, _ := behave(nil, nil)
			batch.SQSHandler(fn, opt)
			t.Error("SQSHandler did not panic")
		})
	}
	t.Run("nil logger is the default", func(t *testing.T) {
		if _, err := batch.New(batch.WithLogger(nil)); err != nil {
			t.Errorf("New(WithLogger(nil)) = %v, want the default logger, as in the idempotency package", err)
		}
	})
	t.Run("nil function", func(t *testing.T) {
		for name, build := range map[string]func(){
			"SQSHandler":      func() { batch.SQSHandler(nil) },
			"KinesisHandler":  func() { batch.KinesisHandler(nil) },
			"DynamoDBHandler": func() { batch.DynamoDBHandler(nil) },
		} {
			func() {
				defer func() {
					err, _ := recover().(error)
					if !errors.As(err, new(*batch.ConfigError)) {
						t.Errorf("%s(nil) panicked with %v, want *ConfigError", name, err)
					}
				}()
				build()
			}()
		}
	})
}

func TestDoneContextFailsRecordsNotStarted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var ran []string
	fn := func(_ context.Context, msg events.SQSMessage) error {
		ran = append(ran, msg.MessageId)
		if msg.MessageId == "m2" {
			cancel() // the invocation's deadline arrives while m2 runs
		}
		return nil
	}
	res := (&batch.Processor{}).SQS(ctx, sqsEvent(standardARN, "m1", "m2", "m3", "m4"), fn)
	if !slices.Equal(ran, []string{"m1", "m2"}) {
		t.Errorf("ran %v, want m1 m2 only", ran)
	}
	if got := failedIDs(res); !slices.Equal(got, []string{"m3", "m4"}) {
		t.Fatalf("failed = %v, want m3 m4", got)
	}
	for _, f := range res.Failures {
		if !errors.Is(f, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", f.ID, f.Err)
		}
	}
}

// With a deadline margin the batch ends that much before the invocation's
// deadline: the record under way sees its context end, the later ones are
// not started, and the call returns in time for the response to be sent.
func TestDeadlineMargin(t *testing.T) {
	t.Parallel()
	deadline := time.Now().Add(400 * time.Millisecond)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var ran []string
	fn := func(ctx context.Context, msg events.SQSMessage) error {
		ran = append(ran, msg.MessageId)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
			return nil
		}
	}
	p, _ := batch.New(batch.WithDeadlineMargin(250*time.Millisecond), quiet())
	res := p.SQS(ctx, sqsEvent(standardARN, "m1", "m2", "m3", "m4", "m5"), fn)
	if !time.Now().Before(deadline) {
		t.Error("the batch ran into the invocation's deadline")
	}
	// 150ms for the records: m1 (100ms) may finish, m2 is cut off, the
	// rest never start.
	if len(ran) > 2 || len(res.Failures) < 3 {
		t.Fatalf("ran %v, failed %v; want at most m1 and m2 run, the rest failed", ran, failedIDs(res))
	}
	for _, f := range res.Failures {
		if !errors.Is(f, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want context.DeadlineExceeded", f.ID, f.Err)
		}
	}
}
