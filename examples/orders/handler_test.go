package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/batch"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

func orderBody(id string, amount int64) string {
	return fmt.Sprintf(`{"order_id":%q,"customer":"c-%s","amount":%d,"currency":"EUR"}`, id, id, amount)
}

func messages(bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: fmt.Sprintf("msg-%d", i), Body: b,
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:orders",
		})
	}
	return ev
}

func newTestApp(t *testing.T, fake *fakeFulfilment) *App {
	t.Helper()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	client := &FulfilmentClient{BaseURL: srv.URL, Timeout: 2 * time.Second, HTTP: srv.Client()}
	app, err := NewApp(idempotencytest.NewStore(), client, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func failedIDs(resp events.SQSEventResponse) string {
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return strings.Join(ids, ",")
}

func TestHandle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		bodies     []string
		failing    map[string]int // order id -> status the service answers
		wantFailed string
		wantAllErr bool
		wantOrders map[string]int
	}{
		{
			name:       "each order once, a repeat under a new message id is not fulfilled again",
			bodies:     []string{orderBody("o1", 100), orderBody("o2", 200), orderBody("o1", 100)},
			wantOrders: map[string]int{"o1": 1, "o2": 1},
		},
		{
			name: "malformed bodies fail alone",
			bodies: []string{
				orderBody("o1", 100), `not json`, `{"customer":"c","amount":1,"currency":"EUR"}`,
				orderBody("o2", 0), orderBody("o3", 300),
			},
			wantFailed: "msg-1,msg-2,msg-3",
			wantOrders: map[string]int{"o1": 1, "o3": 1},
		},
		{
			name:       "a refusal fails only its record",
			bodies:     []string{orderBody("o1", 100), orderBody("o2", 200), orderBody("o3", 300)},
			failing:    map[string]int{"o2": http.StatusTooManyRequests},
			wantFailed: "msg-1",
			wantOrders: map[string]int{"o1": 1, "o3": 1},
		},
		{
			name:       "a server error fails only its record",
			bodies:     []string{orderBody("o1", 100), orderBody("o2", 200)},
			failing:    map[string]int{"o1": http.StatusInternalServerError},
			wantFailed: "msg-0",
			wantOrders: map[string]int{"o2": 1},
		},
		{
			name:       "the same order id with another amount is a conflict, not a repeat",
			bodies:     []string{orderBody("o1", 100), orderBody("o1", 999)},
			wantFailed: "msg-1",
			wantOrders: map[string]int{"o1": 1},
		},
		{
			name:       "every record failing fails the batch",
			bodies:     []string{`[]`, orderBody("o1", 100)},
			failing:    map[string]int{"o1": http.StatusBadGateway},
			wantAllErr: true,
			wantOrders: map[string]int{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeFulfilment(0, 0)
			for id, code := range tt.failing {
				fake.failing.Store(id, code)
			}
			app := newTestApp(t, fake)
			resp, err := app.Handle(context.Background(), messages(tt.bodies...))
			if tt.wantAllErr {
				if !errors.As(err, new(*batch.BatchError)) {
					t.Fatalf("err = %v, want a BatchError", err)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if got := failedIDs(resp); got != tt.wantFailed {
				t.Errorf("failed = %q, want %q", got, tt.wantFailed)
			}
			perOrder, _ := fake.fulfilled()
			if fmt.Sprint(perOrder) != fmt.Sprint(tt.wantOrders) {
				t.Errorf("fulfilled %v, want %v", perOrder, tt.wantOrders)
			}
		})
	}
}

// Per-record errors are typed, so that logs and metrics can tell a poison
// message from a refusal.
func TestRecordErrors(t *testing.T) {
	t.Parallel()
	fake := newFakeFulfilment(0, 0)
	fake.failing.Store("o2", http.StatusTooManyRequests)
	app := newTestApp(t, fake)
	res := app.batch.SQS(context.Background(), messages(`{`, orderBody("o2", 5), orderBody("o3", 7)), app.process)
	if len(res.Failures) != 2 {
		t.Fatalf("failures %v", res.Failures)
	}
	var malformed *MalformedOrderError
	if !errors.As(res.Failures[0], &malformed) {
		t.Errorf("msg-0: %v, want *MalformedOrderError", res.Failures[0].Err)
	}
	var status *StatusError
	if !errors.As(res.Failures[1], &status) || status.StatusCode != http.StatusTooManyRequests {
		t.Errorf("msg-1: %v, want *StatusError 429", res.Failures[1].Err)
	}
}

// A refused record comes back (as the queue would redeliver it) and is
// fulfilled then, with the same Idempotency-Key; a redelivered success is
// not fulfilled again.
func TestRedelivery(t *testing.T) {
	t.Parallel()
	fake := newFakeFulfilment(0, 0)
	fake.failing.Store("o2", http.StatusTooManyRequests)
	app := newTestApp(t, fake)
	ev := messages(orderBody("o1", 1), orderBody("o2", 2))
	if _, err := app.Handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	fake.failing.Delete("o2")
	resp, err := app.Handle(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("redelivery: %v, %v", resp, err)
	}
	perOrder, calls := fake.fulfilled()
	if perOrder["o1"] != 1 || perOrder["o2"] != 1 || calls != 3 {
		t.Errorf("fulfilled %v in %d calls, want each once in 3 calls (o2 refused once)", perOrder, calls)
	}
	for key := range fake.accepted {
		if !strings.HasPrefix(key, "orders.fulfil#") {
			t.Errorf("Idempotency-Key %q is not the idempotency key", key)
		}
	}
}

func TestIdempotencyDisabledStillSendsAKey(t *testing.T) {
	t.Setenv("POWERTOOLS_IDEMPOTENCY_DISABLED", "true")
	fake := newFakeFulfilment(0, 0)
	app := newTestApp(t, fake)
	if _, err := app.Handle(context.Background(), messages(orderBody("o1", 1))); err != nil {
		t.Fatal(err)
	}
	if fake.accepted["order#o1"] != 1 {
		t.Errorf("accepted %v, want the order id as the key", fake.accepted)
	}
}

func TestConfigFromEnv(t *testing.T) {
	for _, tt := range []struct{ table, url, timeout string }{
		{"", "http://x", ""},
		{"t", "", ""},
		{"t", "http://x", "soon"},
		{"t", "http://x", "-1s"},
	} {
		t.Setenv("POWERTOOLS_IDEMPOTENCY_TABLE", tt.table)
		t.Setenv("FULFILMENT_URL", tt.url)
		t.Setenv("FULFILMENT_TIMEOUT", tt.timeout)
		if _, err := newAppFromEnv(context.Background(), slog.New(slog.DiscardHandler)); err == nil {
			t.Errorf("%+v: no error", tt)
		}
	}
}
