package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/jmespath"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// TestDeprecatedOptionsAsBefore checks that each deprecated option still
// does what its replacement does (the same key, the same refusal, the
// same metrics document), and that a mistake in one is still a
// *ConfigError naming it.
func TestDeprecatedOptionsAsBefore(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	handler := func(_ context.Context, o order) (receipt, error) { return receipt{OrderID: o.OrderID}, nil }
	build := func(opts ...idempotency.Option) (*idempotency.Handler, error) {
		return idempotency.New(idempotencytest.NewStore(), handler, append([]idempotency.Option{
			idempotency.WithKeyPrefix(prefix), idempotency.WithClock(func() time.Time { return now }),
		}, opts...)...)
	}
	// outcome is what a handler built with opts makes of event: its key,
	// or the refusal, and the metrics it writes to w.
	outcome := func(event string, w *writes, opts ...idempotency.Option) string {
		h, err := build(opts...)
		if err != nil {
			return fmt.Sprintf("New: %v", err)
		}
		key, _, err := h.KeyOf([]byte(event))
		if tooLarge, ok := errors.AsType[*jmespath.TooLargeError](err); ok {
			err = fmt.Errorf("past a limit of %d", tooLarge.Limit)
		}
		h.Invoke(context.Background(), []byte(event))
		return fmt.Sprintf("key %q, error %v, metrics %q", key, err, w.buf.String())
	}
	upper := jmespath.Function{
		Name:   "upper",
		Params: []jmespath.Param{{Types: jmespath.TypeString}},
		Call:   func(args []any) (any, error) { return strings.ToUpper(args[0].(string)), nil },
	}
	old, current := &writes{}, &writes{}
	tests := []struct {
		name                string
		event               string
		deprecated, replace []idempotency.Option
	}{
		{"WithJMESPathFunctions", `{"order_id":"o-1"}`,
			[]idempotency.Option{idempotency.WithEventKey("upper(order_id)"), idempotency.WithJMESPathFunctions(upper)},
			[]idempotency.Option{idempotency.WithEventKey("upper(order_id)"), idempotency.WithJMESPath(jmespath.WithFunctions(upper))}},
		{"WithDecodeLimit", `{"order_id":"a long order id"}`,
			[]idempotency.Option{idempotency.WithEventKey("order_id"), idempotency.WithDecodeLimit(8)},
			[]idempotency.Option{idempotency.WithEventKey("order_id"), idempotency.WithJMESPath(jmespath.WithDecodeLimit(8))}},
		{"WithMetrics and WithMetricsNamespace", `{"order_id":"o-1"}`,
			[]idempotency.Option{idempotency.WithEventKey("order_id"), idempotency.WithMetrics(old), idempotency.WithMetricsNamespace("Shop")},
			[]idempotency.Option{idempotency.WithEventKey("order_id"), idempotency.WithCloudWatchMetrics(current, "Shop")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old.reset()
			current.reset()
			got, want := outcome(tc.event, old, tc.deprecated...), outcome(tc.event, current, tc.replace...)
			if got != want {
				t.Errorf("deprecated:\n\t%s\nits replacement:\n\t%s", got, want)
			}
		})
	}

	for _, tc := range []struct {
		name string
		opts []idempotency.Option
	}{
		{"WithDecodeLimit", []idempotency.Option{idempotency.WithDecodeLimit(-1)}},
		{"WithMetricsNamespace", []idempotency.Option{idempotency.WithMetrics(&writes{}), idempotency.WithMetricsNamespace("")}},
		{"WithMetricsNamespace", []idempotency.Option{idempotency.WithMetrics(&writes{}), idempotency.WithMetricsNamespace("AWS/Lambda")}},
		{"WithMetrics", []idempotency.Option{idempotency.WithMetrics(&writes{}), idempotency.WithKeyPrefix(strings.Repeat("p", 1025))}},
	} {
		_, err := build(tc.opts...)
		if ce, ok := errors.AsType[*idempotency.ConfigError](err); !ok || ce.Name != tc.name {
			t.Errorf("%s: got %v, want a *ConfigError naming it", tc.name, err)
		}
	}
}
