package idempotency_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// markReplayed is a replay hook that marks an API response as replayed.
func markReplayed(_ context.Context, resp events.APIGatewayV2HTTPResponse, _ *idempotency.Record) (events.APIGatewayV2HTTPResponse, error) {
	headers := map[string]string{"Idempotency-Replayed": "true"}
	for k, v := range resp.Headers {
		headers[k] = v
	}
	resp.Headers = headers
	return resp, nil
}

// TestReplayHookChangesTheResponse checks that the caller of a replay gets
// what the hook returns, that the stored response stays the original, so
// that every replay, from the store or from the local cache, starts from
// it, and that a first call does not meet the hook.
func TestReplayHookChangesTheResponse(t *testing.T) {
	t.Parallel()
	for _, cache := range []int{0, 8} {
		t.Run(map[int]string{0: "store", 8: "local cache"}[cache], func(t *testing.T) {
			store := idempotencytest.NewStore()
			h := idempotency.Wrap(store, func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
				return events.APIGatewayV2HTTPResponse{StatusCode: 201, Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"ok":true}`}, nil
			}, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("requestContext.requestId"),
				idempotency.WithLocalCache(cache), idempotency.WithReplayHook(markReplayed))
			event := []byte(`{"requestContext":{"requestId":"r-1"}}`)
			for call := range 3 {
				raw, err := h.Invoke(context.Background(), event)
				if err != nil {
					t.Fatal(err)
				}
				var resp events.APIGatewayV2HTTPResponse
				if err := json.Unmarshal(raw, &resp); err != nil {
					t.Fatal(err)
				}
				want := map[string]string{"Content-Type": "application/json", "Idempotency-Replayed": "true"}
				if call == 0 {
					delete(want, "Idempotency-Replayed")
				}
				if len(resp.Headers) != len(want) || resp.Headers["Idempotency-Replayed"] != want["Idempotency-Replayed"] || resp.StatusCode != 201 {
					t.Errorf("call %d: %d %v, want 201 %v", call, resp.StatusCode, resp.Headers, want)
				}
			}
			rec := store.Records()[0]
			var stored events.APIGatewayV2HTTPResponse
			if err := json.Unmarshal(rec.Response, &stored); err != nil || len(stored.Headers) != 1 {
				t.Errorf("stored response %s, %v; want the handler's, unmarked", rec.Response, err)
			}
		})
	}
}

func TestReplayHookErrorsAndTypes(t *testing.T) {
	t.Parallel()
	handler := func(context.Context, order) (receipt, error) { return receipt{OrderID: "o-1"}, nil }
	errHook := errors.New("hook says no")
	h := idempotency.Wrap(idempotencytest.NewStore(), handler, idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("order_id"),
		idempotency.WithReplayHook(func(context.Context, receipt, *idempotency.Record) (receipt, error) { return receipt{}, errHook }))
	event := []byte(`{"order_id":"o-1"}`)
	if _, err := h.Invoke(context.Background(), event); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Invoke(context.Background(), event); !errors.Is(err, errHook) {
		t.Errorf("replay = %v, want the hook's error", err)
	}
	_, err := idempotency.New(idempotencytest.NewStore(), handler, idempotency.WithKeyPrefix(prefix),
		idempotency.WithReplayHook(func(_ context.Context, s string, _ *idempotency.Record) (string, error) { return s, nil }))
	var ce *idempotency.ConfigError
	if !errors.As(err, &ce) || ce.Name != "WithReplayHook" {
		t.Errorf("New with a hook of string for a handler of receipt = %v, want a *ConfigError for WithReplayHook", err)
	}
}
