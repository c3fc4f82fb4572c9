package idempotency_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// Metrics of each invocation, as CloudWatch embedded metric format
// documents on standard output, where Lambda sends them to CloudWatch
// Logs: a first call, then its replay 90 seconds later. Under Lambda,
// setting POWERTOOLS_IDEMPOTENCY_METRICS=true does the same without code,
// and the dimensions include FunctionName. (The clock is fixed so that the
// output is too.)
func ExampleWithCloudWatchMetrics() {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	h := idempotency.Wrap(idempotencytest.NewStore(),
		func(ctx context.Context, o order) (receipt, error) {
			return receipt{OrderID: o.OrderID, Charged: o.Amount}, nil
		},
		idempotency.WithKeyPrefix("orders"),
		idempotency.WithEventKey("order_id"),
		idempotency.WithCloudWatchMetrics(os.Stdout, "Shop"), // "": POWERTOOLS_METRICS_NAMESPACE
		idempotency.WithClock(func() time.Time { return now }),
	)

	event := []byte(`{"order_id":"o-1","amount":5}`)
	h.Invoke(context.Background(), event)
	now = now.Add(90 * time.Second)
	out, _ := h.Invoke(context.Background(), event)
	fmt.Println(string(out))
	// Output:
	// {"IdempotencyInvocationDuration":0,"IdempotencyNew":1,"KeyPrefix":"orders","_aws":{"Timestamp":1748779200000,"CloudWatchMetrics":[{"Namespace":"Shop","Dimensions":[["KeyPrefix"]],"Metrics":[{"Name":"IdempotencyNew","Unit":"Count"},{"Name":"IdempotencyInvocationDuration","Unit":"Milliseconds"}]}]}}
	// {"IdempotencyInvocationDuration":0,"IdempotencyReplayAge":90000,"IdempotencyReplayed":1,"KeyPrefix":"orders","_aws":{"Timestamp":1748779290000,"CloudWatchMetrics":[{"Namespace":"Shop","Dimensions":[["KeyPrefix"]],"Metrics":[{"Name":"IdempotencyReplayed","Unit":"Count"},{"Name":"IdempotencyInvocationDuration","Unit":"Milliseconds"},{"Name":"IdempotencyReplayAge","Unit":"Milliseconds"}]}]}}
	// {"order_id":"o-1","charged":5}
}

// One log record per invocation, with the wrapper's logger: a first call,
// its replay, and a duplicate whose amount differs, refused by payload
// validation. Under Lambda, POWERTOOLS_IDEMPOTENCY_LOG_OUTCOME=true does
// the same without code.
func ExampleWithOutcomeLog() {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	withoutTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	h := idempotency.Wrap(idempotencytest.NewStore(),
		func(ctx context.Context, o order) (receipt, error) {
			return receipt{OrderID: o.OrderID, Charged: o.Amount}, nil
		},
		idempotency.WithKeyPrefix("orders"),
		idempotency.WithEventKey("order_id"),
		idempotency.WithPayloadValidation("amount"),
		idempotency.WithOutcomeLog(true),
		idempotency.WithLogger(slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: withoutTime}))),
		idempotency.WithClock(func() time.Time { return now }),
	)

	// A deadline, as Lambda gives: without one, a warning says how long
	// leases last.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h.Invoke(ctx, []byte(`{"order_id":"o-1","amount":5}`))
	now = now.Add(90 * time.Second)
	h.Invoke(ctx, []byte(`{"order_id":"o-1","amount":5}`))
	h.Invoke(ctx, []byte(`{"order_id":"o-1","amount":6}`))
	// Output:
	// level=INFO msg="idempotency: invocation" outcome=new key_prefix=orders key=orders#00d5c8b71f851bbe47626a189b20fb19c11753e244bb658095c370ba3798f85c duration=0s
	// level=INFO msg="idempotency: invocation" outcome=replayed key_prefix=orders key=orders#00d5c8b71f851bbe47626a189b20fb19c11753e244bb658095c370ba3798f85c duration=0s replay_age=1m30s
	// level=WARN msg="idempotency: invocation" outcome=conflict key_prefix=orders key=orders#00d5c8b71f851bbe47626a189b20fb19c11753e244bb658095c370ba3798f85c duration=0s error="idempotency: payload for key \"orders#00d5c8b71f851bbe47626a189b20fb19c11753e244bb658095c370ba3798f85c\" differs from the stored one (stored hash ef2d127de37b942baad06145e54b0c619a1f22327b2ebbcfbec78f5564afe39d, event hash e7f6c011776e8db7cd330b54174fd76f7d0216b612387a5ffcfb81e6f0919683)"
}
