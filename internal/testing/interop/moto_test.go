package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// The functions of these tests share a table, a key expression and a
// payload validation expression; the Powertools functions run in a
// process of their own (testdata/function.py, function.mjs), the Go
// function in the test, all in the Lambda function "interop".
const (
	functionName = "interop"
	pythonModule = "app.lambda_handler" // testdata/function.py's handler
	keyExpr      = "powertools_json(body).order_id"
	validation   = "powertools_json(body).[amount,currency]"
)

// goFunction is the Go function: an idempotent handler in rt's
// compatibility mode, whose calls return response.
type goFunction struct {
	h        *idempotency.Handler
	calls    atomic.Int32
	response json.RawMessage
	// When set, the handler closes started and waits for release.
	started, release chan struct{}
	// uncertain makes the handler's outcome uncertain.
	uncertain bool
}

func newGoFunction(t *testing.T, rt runtime, store idempotency.Store) *goFunction {
	t.Helper()
	g := &goFunction{}
	opts := []idempotency.Option{
		idempotency.WithCompatibility(rt.compat),
		idempotency.WithEventKey(keyExpr),
		idempotency.WithPayloadValidation(validation),
	}
	if rt.compat == idempotency.PowertoolsPython {
		opts = append(opts, idempotency.WithPythonHandler(pythonModule))
	}
	g.h = idempotency.Wrap(store, func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		g.calls.Add(1)
		if g.started != nil {
			close(g.started)
			<-g.release
		}
		if g.uncertain {
			return nil, idempotency.Uncertain(errors.New("the payment provider did not answer"))
		}
		return g.response, nil
	}, opts...)
	return g
}

// invoke runs one invocation with a deadline, as Lambda gives one, and
// returns its response and error and how often the handler ran.
func (g *goFunction) invoke(event string, response string) (resp []byte, calls int, err error) {
	g.response = json.RawMessage(response)
	before := g.calls.Load()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err = g.h.Invoke(ctx, []byte(event))
	return resp, int(g.calls.Load() - before), err
}

// order returns an API Gateway event for an order, its body holding the
// key and the validated fields, with text to escape.
func order(id string, amount float64) string {
	body, _ := json.Marshal(map[string]any{
		"order_id": id, "amount": amount, "currency": "EUR",
		"customer": "Zoë Ørsted 😀", "note": "<b>\"fragile\" & \\ ✓</b>",
	})
	event, _ := json.Marshal(map[string]any{
		"httpMethod": "POST",
		"headers":    map[string]string{"content-type": "application/json"},
		"body":       string(body),
	})
	return string(event)
}

// receipt returns a response with nesting, fractions and text to escape.
func receipt(id, status string) string {
	return fmt.Sprintf(`{"order_id":%q,"status":%q,"amount":12.5,"ratio":0.1,"count":3,"items":[{"sku":"A-1","qty":2},{"sku":"B-7","qty":1}],"note":"café ✓ 😀 <b>&","ok":true,"none":null,"tags":[]}`, id, status)
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(va, vb)
}

// TestSharedTable runs a Go function and each Powertools function on one
// moto table, in both directions: each replays the other's record, a
// payload conflict with the other's record is detected, and a live lease
// of one blocks the other. It does so with a simple key and, for the
// replays, in composite mode (a sort key).
func TestSharedTable(t *testing.T) {
	client := testenv.DynamoDB(t, testenv.MotoEnv)
	endpoint := os.Getenv(testenv.MotoEnv)
	rts := runtimes(t)
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", functionName)
	run := time.Now().UnixNano()
	for _, layout := range []struct{ name, sk string }{{"simple", ""}, {"composite", "sk"}} {
		table := fmt.Sprintf("interop-%s-%d", layout.name, run)
		opts := func(o *dynamo.Options) { o.TableName, o.SortKeyAttr = table, layout.sk }
		if err := dynamo.CreateTable(t.Context(), client, opts); err != nil {
			t.Fatal(err)
		}
		store, err := dynamo.New(client, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, rt := range rts {
			p := &pair{
				f: startFunction(t, rt, endpoint), g: newGoFunction(t, rt, store),
				base:   request{Table: table, SK: layout.sk, Expr: keyExpr, Validation: validation},
				ids:    fmt.Sprintf("%s-%s-%d", layout.name, rt.name, run),
				client: client,
			}
			t.Run(layout.name+"/"+rt.name, func(t *testing.T) {
				t.Run("PowertoolsRecordReplayedByGo", p.powertoolsRecordReplayedByGo)
				t.Run("GoRecordReplayedByPowertools", p.goRecordReplayedByPowertools)
				t.Run("StringResponses", p.stringResponses)
				if layout.sk != "" {
					return
				}
				t.Run("ConflictWithPowertoolsRecord", p.conflictWithPowertoolsRecord)
				t.Run("ConflictWithGoRecord", p.conflictWithGoRecord)
				t.Run("PowertoolsLeaseBlocksGo", p.powertoolsLeaseBlocksGo)
				t.Run("GoLeaseBlocksPowertools", p.goLeaseBlocksPowertools)
				t.Run("GoUncertainRecordStopsPowertools", p.goUncertainRecordStopsPowertools)
			})
		}
	}
}

// pair is a Go function and a Powertools function sharing a table.
type pair struct {
	f    *function
	g    *goFunction
	base request // the table and the expressions
	ids  string  // makes the order ids of a run unique
	n    int

	client *dynamodb.Client
}

// orderID returns a new order id.
func (p *pair) orderID() string {
	p.n++
	return fmt.Sprintf("ord-%s-%d", p.ids, p.n)
}

func (p *pair) powertools(t *testing.T, op, event, response string) answer {
	t.Helper()
	req := p.base
	req.Op, req.Event, req.ID = op, event, "held"
	if response != "" {
		req.Response = json.RawMessage(response)
	}
	return p.f.do(t, req)
}

// wantPowertoolsError checks that the Powertools invocation failed with
// the exception named want, without running its handler.
func (p *pair) wantPowertoolsError(t *testing.T, a answer, want string) {
	t.Helper()
	if !strings.HasPrefix(a.Error, want+":") || a.Calls != 0 {
		t.Fatalf("%s: %+v; want %s and no handler call", p.f.rt.name, a, want)
	}
}

func (p *pair) powertoolsRecordReplayedByGo(t *testing.T) {
	id := p.orderID()
	first := p.powertools(t, "invoke", order(id, 12.5), receipt(id, "charged"))
	if first.Error != "" || first.Calls != 1 {
		t.Fatalf("%s first invocation: %+v", p.f.rt.name, first)
	}
	resp, calls, err := p.g.invoke(order(id, 12.5), receipt(id, "charged again"))
	if err != nil || calls != 0 {
		t.Fatalf("Go duplicate: %s, %v, %d handler calls; want the replay of the %s record", resp, err, calls, p.f.rt.name)
	}
	if !sameJSON(t, resp, first.Result) {
		t.Fatalf("Go replayed %s, %s returned %s", resp, p.f.rt.name, first.Result)
	}
}

func (p *pair) goRecordReplayedByPowertools(t *testing.T) {
	id := p.orderID()
	resp, calls, err := p.g.invoke(order(id, 12.5), receipt(id, "charged"))
	if err != nil || calls != 1 {
		t.Fatalf("Go first invocation: %v, %d calls", err, calls)
	}
	dup := p.powertools(t, "invoke", order(id, 12.5), receipt(id, "charged again"))
	if dup.Error != "" || dup.Calls != 0 {
		t.Fatalf("%s duplicate: %+v; want the replay of the Go record", p.f.rt.name, dup)
	}
	if !sameJSON(t, dup.Result, resp) {
		t.Fatalf("%s replayed %s, Go returned %s", p.f.rt.name, dup.Result, resp)
	}
	p.checkItem(t, order(id, 12.5))
	// And the Go function replays its own record as the same value.
	again, calls, err := p.g.invoke(order(id, 12.5), receipt(id, "charged again"))
	if err != nil || calls != 0 || !sameJSON(t, again, resp) {
		t.Fatalf("Go duplicate: %s, %v, %d calls; want %s", again, err, calls, resp)
	}
}

func (p *pair) conflictWithPowertoolsRecord(t *testing.T) {
	id := p.orderID()
	if a := p.powertools(t, "invoke", order(id, 12.5), receipt(id, "charged")); a.Error != "" {
		t.Fatalf("%s: %+v", p.f.rt.name, a)
	}
	_, calls, err := p.g.invoke(order(id, 99), receipt(id, "charged"))
	if !errors.As(err, new(*idempotency.PayloadConflictError)) || calls != 0 {
		t.Fatalf("Go with another amount: %v, %d calls; want *PayloadConflictError", err, calls)
	}
}

func (p *pair) conflictWithGoRecord(t *testing.T) {
	id := p.orderID()
	if _, _, err := p.g.invoke(order(id, 12.5), receipt(id, "charged")); err != nil {
		t.Fatal(err)
	}
	p.wantPowertoolsError(t, p.powertools(t, "invoke", order(id, 99), receipt(id, "charged")), "IdempotencyValidationError")
}

func (p *pair) powertoolsLeaseBlocksGo(t *testing.T) {
	id := p.orderID()
	if a := p.powertools(t, "hold", order(id, 12.5), receipt(id, "charged")); !a.Held {
		t.Fatalf("%s hold: %+v", p.f.rt.name, a)
	}
	_, calls, err := p.g.invoke(order(id, 12.5), receipt(id, "charged twice"))
	if !errors.As(err, new(*idempotency.InProgressError)) || calls != 0 {
		t.Fatalf("Go during the %s invocation: %v, %d calls; want *InProgressError", p.f.rt.name, err, calls)
	}
	done := p.f.do(t, request{Op: "release", ID: "held"})
	if done.Error != "" || done.Calls != 1 {
		t.Fatalf("%s after release: %+v", p.f.rt.name, done)
	}
	resp, calls, err := p.g.invoke(order(id, 12.5), receipt(id, "charged twice"))
	if err != nil || calls != 0 || !sameJSON(t, resp, done.Result) {
		t.Fatalf("Go after the %s invocation: %s, %v, %d calls; want %s", p.f.rt.name, resp, err, calls, done.Result)
	}
}

func (p *pair) goLeaseBlocksPowertools(t *testing.T) {
	id := p.orderID()
	p.g.started, p.g.release = make(chan struct{}), make(chan struct{})
	defer func() { p.g.started, p.g.release = nil, nil }()
	type result struct {
		resp []byte
		err  error
	}
	done := make(chan result)
	p.g.response = json.RawMessage(receipt(id, "charged"))
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := p.g.h.Invoke(ctx, []byte(order(id, 12.5)))
		done <- result{resp, err}
	}()
	<-p.g.started
	p.wantPowertoolsError(t, p.powertools(t, "invoke", order(id, 12.5), receipt(id, "charged twice")), "IdempotencyAlreadyInProgressError")
	close(p.g.release)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	dup := p.powertools(t, "invoke", order(id, 12.5), receipt(id, "charged twice"))
	if dup.Error != "" || dup.Calls != 0 || !sameJSON(t, dup.Result, r.resp) {
		t.Fatalf("%s after the Go invocation: %+v; want the replay of %s", p.f.rt.name, dup, r.resp)
	}
}

// goUncertainRecordStopsPowertools: a status Powertools does not know
// makes it fail, without running its handler.
func (p *pair) goUncertainRecordStopsPowertools(t *testing.T) {
	id := p.orderID()
	p.g.uncertain = true
	_, _, err := p.g.invoke(order(id, 12.5), receipt(id, "charged"))
	p.g.uncertain = false
	if !errors.As(err, new(*idempotency.UncertainError)) {
		t.Fatalf("Go: %v, want *UncertainError", err)
	}
	a := p.powertools(t, "invoke", order(id, 12.5), receipt(id, "charged"))
	want := map[idempotency.Compatibility]string{
		idempotency.PowertoolsPython:     "IdempotencyPersistenceLayerError",
		idempotency.PowertoolsTypeScript: "IdempotencyInvalidStatusError",
	}[p.f.rt.compat]
	p.wantPowertoolsError(t, a, want)
	t.Logf("%s on an UNCERTAIN record: %s", p.f.rt.name, a.Error)
}

// stringResponses: a response that is a JSON string, which Powertools
// TypeScript keeps as an S attribute, as Python keeps JSON text.
func (p *pair) stringResponses(t *testing.T) {
	id := p.orderID()
	first := p.powertools(t, "invoke", order(id, 12.5), `"charged"`)
	resp, calls, err := p.g.invoke(order(id, 12.5), `"charged again"`)
	if first.Error != "" || err != nil || calls != 0 || string(resp) != `"charged"` {
		t.Fatalf("%s then Go: %+v, then %s, %v, %d calls; want the replay of \"charged\"", p.f.rt.name, first, resp, err, calls)
	}
	id = p.orderID()
	if _, _, err := p.g.invoke(order(id, 12.5), `"charged"`); err != nil {
		t.Fatal(err)
	}
	dup := p.powertools(t, "invoke", order(id, 12.5), `"charged again"`)
	if dup.Error != "" || dup.Calls != 0 || string(dup.Result) != `"charged"` {
		t.Fatalf("Go then %s: %+v; want the replay of \"charged\"", p.f.rt.name, dup)
	}
}

// checkItem checks the key and the data attribute of the record of
// event that the Go function wrote: the key of the Powertools runtime's
// format, and the response kept as that runtime keeps it.
func (p *pair) checkItem(t *testing.T, event string) {
	t.Helper()
	key, _, err := p.g.h.KeyOf([]byte(event))
	if err != nil {
		t.Fatal(err)
	}
	wantKey := map[idempotency.Compatibility]*regexp.Regexp{
		idempotency.PowertoolsPython:     regexp.MustCompile(`^interop\.app\.lambda_handler#[0-9a-f]{32}$`),
		idempotency.PowertoolsTypeScript: regexp.MustCompile(`^interop#[A-Za-z0-9+/]{22}==$`),
	}[p.f.rt.compat]
	if !wantKey.MatchString(key) {
		t.Errorf("key %q, want one matching %s", key, wantKey)
	}
	itemKey := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: key}}
	if p.base.SK != "" {
		itemKey = map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "idempotency#" + functionName}, p.base.SK: &types.AttributeValueMemberS{Value: key}}
	}
	out, err := p.client.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(p.base.Table), Key: itemKey, ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item == nil {
		t.Fatalf("the Go record %q: %v, %v", key, out, err)
	}
	data := out.Item["data"]
	switch p.f.rt.compat {
	case idempotency.PowertoolsPython:
		if _, ok := data.(*types.AttributeValueMemberS); !ok {
			t.Errorf("data is %T, want S: JSON text, as Powertools Python keeps it", data)
		}
	case idempotency.PowertoolsTypeScript:
		if _, ok := data.(*types.AttributeValueMemberM); !ok {
			t.Errorf("data is %T, want M: the object, as Powertools TypeScript keeps it", data)
		}
	}
}
