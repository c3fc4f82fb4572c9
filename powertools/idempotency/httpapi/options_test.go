package httpapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/httpapi"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

func v2Handler(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return events.APIGatewayV2HTTPResponse{StatusCode: 201}, nil
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	store := idempotencytest.NewStore()
	prefix := httpapi.WithOptions(idempotency.WithKeyPrefix("test"))
	v1Client := httpapi.WithClient(func(r events.APIGatewayProxyRequest) string { return r.RequestContext.AccountID })
	v2Client := httpapi.WithClient(func(r events.APIGatewayV2HTTPRequest) string { return r.RequestContext.AccountID })

	mismatched := func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayProxyResponse, error) {
		return events.APIGatewayProxyResponse{}, nil
	}
	if _, err := httpapi.New(store, mismatched, prefix); !isConfigError(err, "fn") {
		t.Errorf("New with an HTTP API request and a REST API response: %v, want a ConfigError for fn", err)
	}

	tests := map[string]struct {
		opts []httpapi.Option
		name string // the ConfigError's Name
	}{
		"client without the header":      {[]httpapi.Option{v2Client}, "WithClient"},
		"client of another request type": {[]httpapi.Option{httpapi.WithKeyHeader(true), v1Client}, "WithClient"},
		"replayed header not a token":    {[]httpapi.Option{httpapi.WithReplayedHeader("Replayed: yes")}, "WithReplayedHeader"},
		"middleware option":              {[]httpapi.Option{httpapi.WithOptions(idempotency.WithExpiresAfter(0))}, "WithExpiresAfter"},
		"middleware expression":          {[]httpapi.Option{httpapi.WithOptions(idempotency.WithPayloadValidation("body["))}, "WithPayloadValidation"},
		"empty problem type base":        {[]httpapi.Option{httpapi.WithProblemTypeBase("")}, "WithProblemTypeBase"},
		"relative problem type base":     {[]httpapi.Option{httpapi.WithProblemTypeBase("/problems/")}, "WithProblemTypeBase"},
		"problem type base with a space": {[]httpapi.Option{httpapi.WithProblemTypeBase("https://api.example.com/our problems/")}, "WithProblemTypeBase"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := httpapi.New(store, v2Handler, append([]httpapi.Option{prefix}, tt.opts...)...)
			if !isConfigError(err, tt.name) {
				t.Errorf("New: %v, want a ConfigError for %s", err, tt.name)
			}
		})
	}

	if _, err := httpapi.New(store, v2Handler, prefix, httpapi.WithKeyHeader(true), v2Client, nil); err != nil {
		t.Errorf("New with valid options and a nil one: %v", err)
	}
	for _, base := range []string{"about:blank", "https://api.example.com/problems/", "https://api.example.com/errors#", "urn:example:problem:"} {
		if _, err := httpapi.New(store, v2Handler, prefix, httpapi.WithProblemTypeBase(base)); err != nil {
			t.Errorf("WithProblemTypeBase(%q): %v", base, err)
		}
	}
}

func TestWrapPanicsOnConfigError(t *testing.T) {
	t.Parallel()
	defer func() {
		if err, _ := recover().(error); !isConfigError(err, "WithReplayedHeader") {
			t.Errorf("Wrap panicked with %v, want a ConfigError", err)
		}
	}()
	httpapi.Wrap(idempotencytest.NewStore(), v2Handler, httpapi.WithReplayedHeader(" "))
	t.Error("Wrap did not panic")
}

// The key header replaces the key expression of the environment, and its
// default validation gives way to the environment's.
func TestKeyHeaderAndTheEnvironment(t *testing.T) {
	t.Setenv("POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH", "powertools_json(body).order_id")
	t.Setenv("POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH", "powertools_json(body).amount")
	runs := 0
	h, err := httpapi.New(idempotencytest.NewStore(), func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		runs++
		return events.APIGatewayV2HTTPResponse{StatusCode: 201}, nil
	}, append(baseOptions(), httpapi.WithKeyHeader(true))...)
	if err != nil {
		t.Fatal(err)
	}
	call := func(key, body string) events.APIGatewayV2HTTPResponse {
		resp, err := h(context.Background(), events.APIGatewayV2HTTPRequest{Headers: map[string]string{"idempotency-key": key}, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	call("k1", `{"order_id":"o1","amount":5,"note":"a"}`)
	// Another order_id under the same header: the header is the key.
	if resp := call("k1", `{"order_id":"o2","amount":5,"note":"b"}`); resp.Headers["Idempotency-Replayed"] != "true" {
		t.Errorf("same header, other order_id: %d %v, want a replay (the key is the header)", resp.StatusCode, resp.Headers)
	}
	if resp := call("k1", `{"order_id":"o1","amount":6}`); resp.StatusCode != 422 {
		t.Errorf("same header, other amount: %d, want 422 (the environment's validation)", resp.StatusCode)
	}
	// Another header, same order_id: another key.
	if resp := call("k2", `{"order_id":"o1","amount":5}`); resp.StatusCode != 201 || runs != 2 {
		t.Errorf("other header: %d after %d runs, want a run of its own", resp.StatusCode, runs)
	}
}

func isConfigError(err error, name string) bool {
	ce, ok := errors.AsType[*idempotency.ConfigError](err)
	return ok && ce.Name == name
}
