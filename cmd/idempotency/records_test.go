package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// shop is an idempotent handler over a table, keyed on order_id with the
// amount validated and the prefix "orders-fn", that counts its effects.
// An order marked uncertain ends UNCERTAIN; while block is set, the
// handler waits on it after its effect.
type shop struct {
	h        *idempotency.Handler
	mu       sync.Mutex
	effects  map[string]int
	outcomes []idempotency.Outcome
	// entered gets a value when a handler has run its effect and waits
	// on block.
	entered, block chan struct{}
}

type order struct {
	OrderID   string `json:"order_id"`
	Amount    int    `json:"amount"`
	Uncertain bool   `json:"uncertain,omitempty"`
}

func newShop(t *testing.T, store idempotency.Store) *shop {
	t.Helper()
	s := &shop{effects: map[string]int{}}
	var err error
	s.h, err = idempotency.New(store, func(ctx context.Context, o order) (map[string]string, error) {
		s.mu.Lock()
		s.effects[o.OrderID]++
		block, entered := s.block, s.entered
		s.mu.Unlock()
		if block != nil {
			entered <- struct{}{}
			<-block
		}
		if o.Uncertain {
			return nil, idempotency.Uncertain(errors.New("the provider timed out"))
		}
		return map[string]string{"order_id": o.OrderID, "status": "fulfilled"}, nil
	},
		idempotency.WithEventKey("order_id"),
		idempotency.WithPayloadValidation("amount"),
		idempotency.WithKeyPrefix("orders-fn"),
		idempotency.WithLogger(discard),
		idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) {
			s.mu.Lock()
			s.outcomes = append(s.outcomes, o.Outcome)
			s.mu.Unlock()
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *shop) invoke(t *testing.T, event string) ([]byte, error) {
	t.Helper()
	return s.h.Invoke(context.Background(), []byte(event))
}

func (s *shop) effectsOf(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.effects[id]
}

func (s *shop) lastOutcome() idempotency.Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.outcomes[len(s.outcomes)-1]
}

// world is a fresh store on one server (a DynamoDB table, or a key prefix
// on a Redis or Valkey server), a shop over it, and the command's flags
// that name the store and the shop's settings.
type world struct {
	h *harness
	// where are the command's flags that name the store.
	where []string
	store testStore
	shop  *shop
	flags []string
	// putCorrupted writes, at key, a record that does not decode.
	putCorrupted func(t *testing.T, key string)
	// table and client are DynamoDB's.
	table  string
	client *dynamodb.Client
	// redisURL and redisPrefix are Redis's.
	redisURL, redisPrefix string
}

// testStore is a store as the tests use it, besides the command.
type testStore interface {
	idempotency.Store
}

// recordServers are the stores the record commands are tested on.
var recordServers = []struct {
	name  string
	world func(*testing.T) *world
}{
	{"moto", func(t *testing.T) *world { return newWorld(t, testenv.MotoEnv) }},
	{"dynalite", func(t *testing.T) *world { return newWorld(t, testenv.DynaliteEnv) }},
	{"valkey", func(t *testing.T) *world { return newRedisWorld(t, redisServers[0]) }},
	{"redis", func(t *testing.T) *world { return newRedisWorld(t, redisServers[1]) }},
	{"valkey-cluster", func(t *testing.T) *world { return newRedisWorld(t, redisServers[2]) }},
}

// newWorld returns a world on a fresh table of the DynamoDB server whose
// URL is in the environment variable serverEnv.
func newWorld(t *testing.T, serverEnv string) *world {
	t.Helper()
	endpoint := testenv.Endpoint(t, serverEnv)
	table, client := newTable(t, endpoint)
	store, err := dynamo.New(client, func(o *dynamo.Options) { o.TableName = table })
	if err != nil {
		t.Fatal(err)
	}
	w := &world{
		h: &harness{endpoint: endpoint}, where: []string{"--table", table}, store: store,
		shop:  newShop(t, store),
		table: table, client: client,
	}
	w.putCorrupted = func(t *testing.T, key string) {
		_, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: &table, Item: map[string]types.AttributeValue{
			"id": &types.AttributeValueMemberS{Value: key}, "status": &types.AttributeValueMemberS{Value: "DONE"},
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	w.flags = append(slices.Clone(w.where), "--event-key", "order_id", "--payload-validation", "amount", "--function-name", "orders-fn")
	return w
}

// cmd returns the command line name, the world's flags, then args.
func (w *world) cmd(name string, args ...string) []string {
	return append(append([]string{name}, w.flags...), args...)
}

// at returns the command line name, the flags that name the store, then
// args.
func (w *world) at(name string, args ...string) []string {
	return append(append([]string{name}, w.where...), args...)
}

// with returns a copy of the world's harness, for a change to one run.
func (w *world) with() *harness {
	h := *w.h
	return &h
}

// beforeWrite returns the world's harness, with fn run once, just before
// the command's first write (DeleteItem or PutItem on DynamoDB, a script
// with arguments on Redis): a way to make something happen between the
// command's read and its write.
func (w *world) beforeWrite(fn func()) *harness {
	h := w.with()
	fn = sync.OnceFunc(fn)
	h.apiOptions = append(slices.Clone(h.apiOptions), before("DeleteItem", fn), before("PutItem", fn))
	h.redisHooks = append(slices.Clone(h.redisHooks), beforeScriptWrite(fn))
	return h
}

func (w *world) keyOf(t *testing.T, event string) string {
	t.Helper()
	key, _, err := w.shop.h.KeyOf([]byte(event))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func (w *world) get(t *testing.T, key string) *idempotency.Record {
	t.Helper()
	rec, err := w.store.Get(context.Background(), key)
	if errors.Is(err, idempotency.ErrRecordNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func wantContains(t *testing.T, r result, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(r.stdout, p) {
			t.Errorf("stdout has no %q:\n%v", p, r)
		}
	}
}

// wantField fails t unless a line of r's stdout is the field name with
// value, as printRecord writes it.
func wantField(t *testing.T, r result, name, value string) {
	t.Helper()
	if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(name) + ` +` + regexp.QuoteMeta(value) + `$`).MatchString(r.stdout) {
		t.Errorf("stdout has no field %s %s:\n%v", name, value, r)
	}
}

func TestInspect(t *testing.T) {
	t.Parallel()
	for _, srv := range recordServers {
		t.Run(srv.name, func(t *testing.T) {
			w := srv.world(t)
			const ev = `{"order_id":"o-1","amount":1250}`
			if _, err := w.shop.invoke(t, ev); err != nil {
				t.Fatal(err)
			}
			key := w.keyOf(t, ev)
			file := writeFile(t, "event.json", ev)

			r := w.h.run(t, w.cmd("inspect", file)...).want(t, exitOK)
			wantField(t, r, "status", "COMPLETED")
			wantContains(t, r, "key "+key, "(matches the event's)", "decodes as JSON", "a delivery gets the stored response")

			var got inspection
			r = w.h.run(t, w.cmd("inspect", "--json", "--response", file)...).want(t, exitOK)
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatal(err)
			}
			if got.Key != key || got.Record == nil || got.Record.Status != "COMPLETED" || !got.Record.Live ||
				got.PayloadHashMatches == nil || !*got.PayloadHashMatches || !got.Record.ResponseJSON ||
				got.Response == nil || *got.Response != `{"order_id":"o-1","status":"fulfilled"}` || got.Record.AgeSeconds == nil {
				t.Errorf("inspect --json = %s", r.stdout)
			}

			// The same order id with another amount: a conflict.
			r = w.h.run(t, w.cmd("inspect", "--json", writeFile(t, "other.json", `{"order_id":"o-1","amount":99}`))...).want(t, exitOK)
			got = inspection{}
			json.Unmarshal([]byte(r.stdout), &got)
			if got.Key != key || got.PayloadHashMatches == nil || *got.PayloadHashMatches {
				t.Errorf("inspect of a conflicting event = %s", r.stdout)
			}
			r = w.h.run(t, w.cmd("inspect", writeFile(t, "other.json", `{"order_id":"o-1","amount":99}`))...).want(t, exitOK)
			wantContains(t, r, "PayloadConflictError")

			// By key, and from standard input.
			r = w.h.run(t, w.at("inspect", "--key", key)...).want(t, exitOK)
			wantContains(t, r, "COMPLETED")
			stdin := w.with()
			stdin.stdin = ev
			wantContains(t, stdin.run(t, w.cmd("inspect", "-")...).want(t, exitOK), "key "+key)

			// An event never seen.
			r = w.h.run(t, w.cmd("inspect", writeFile(t, "new.json", `{"order_id":"o-2","amount":1}`))...).want(t, exitOK)
			wantContains(t, r, "no record of key orders-fn#", ": a delivery runs the handler")
			r = w.h.run(t, w.cmd("inspect", "--json", writeFile(t, "new.json", `{"order_id":"o-2","amount":1}`))...).want(t, exitOK)
			if !strings.Contains(r.stdout, `"record":null`) {
				t.Errorf("inspect --json of a new event = %s", r.stdout)
			}
		})
	}
}

// TestInspectSettingsSources: the settings come from flags, from the
// command's environment, or from the function's entry in a template,
// Globals included; each gives the key the handler has.
func TestInspectSettingsSources(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testenv.MotoEnv)
	const ev = `{"order_id":"o-1","amount":1250}`
	w.shop.invoke(t, ev)
	key := w.keyOf(t, ev)
	file := writeFile(t, "event.json", ev)

	env := &harness{endpoint: w.h.endpoint, env: map[string]string{
		"POWERTOOLS_IDEMPOTENCY_TABLE":                       w.table,
		"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH":          "order_id",
		"POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH": "amount",
		"AWS_LAMBDA_FUNCTION_NAME":                           "orders-fn",
	}}
	wantContains(t, env.run(t, "inspect", file).want(t, exitOK), "key "+key, "matches the event's")

	tmpl := writeFile(t, "template.yaml", `
Globals:
  Function:
    Environment:
      Variables:
        POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH: order_id
Resources:
  Table:
    Type: AWS::DynamoDB::Table
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: orders-fn
      Environment:
        Variables:
          POWERTOOLS_IDEMPOTENCY_TABLE: !Ref Table
          POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH: amount
`)
	// The shell's variables do not leak into the template's function.
	env.env["POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH"] = "amount"
	r := env.run(t, "inspect", "--template", tmpl, "--resource", "Fn", "--table", w.table, file).want(t, exitOK)
	wantContains(t, r, "key "+key, "matches the event's")

	// A flag wins over the template.
	r = env.run(t, "inspect", "--template", tmpl, "--resource", "Fn", "--table", w.table, "--key-prefix", "other", file).want(t, exitOK)
	wantContains(t, r, "no record of key other#")

	// Exit 1: the function itself would not key the event, or the
	// store is not there.
	for name, args := range map[string][]string{
		"no table": {"inspect", "--event-key", "order_id", "--function-name", "f", file},
		"not JSON": {"inspect", "--table", w.table, "--function-name", "f", writeFile(t, "bad.json", "{")},
	} {
		t.Run(name, func(t *testing.T) {
			r := (&harness{endpoint: w.h.endpoint}).run(t, args...).want(t, exitFailed)
			if r.stderr == "" {
				t.Errorf("no reason given: %v", r)
			}
		})
	}
}

// TestUnreadableInput: a command line, or a file it names, that cannot be
// read ends the record commands with exit 2, as docs/operations.md says,
// before anything is looked up.
func TestUnreadableInput(t *testing.T) {
	t.Parallel()
	tmpl := writeFile(t, "template.yaml", "Resources:\n  Fn:\n    Type: AWS::Serverless::Function\n")
	event := writeFile(t, "event.json", `{"order_id":"o-1"}`)
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	notYAML := writeFile(t, "bad.yaml", "Resources: [\n")
	for name, args := range map[string][]string{
		"template missing":       {"inspect", "--table", "t", "--template", missing, "--resource", "Fn", event},
		"template not YAML":      {"inspect", "--table", "t", "--template", notYAML, "--resource", "Fn", event},
		"template, no resource":  {"inspect", "--table", "t", "--template", tmpl, event},
		"no such resource":       {"inspect", "--table", "t", "--template", tmpl, "--resource", "Table", event},
		"resource, no template":  {"inspect", "--table", "t", "--resource", "Fn", event},
		"event file missing":     {"inspect", "--table", "t", "--function-name", "f", filepath.Join(t.TempDir(), "event.json")},
		"no key, no event":       {"inspect", "--table", "t"},
		"key and event":          {"inspect", "--table", "t", "--key", "k", event},
		"no prefix":              {"inspect", "--table", "t", "--event-key", "order_id", event},
		"forget, template":       {"forget", "--table", "t", "--template", missing, "--resource", "Fn", event},
		"resolve, template":      {"resolve", "--table", "t", "--failed", "--template", notYAML, "--resource", "Fn", event},
		"resolve, response file": {"resolve", "--table", "t", "--key", "k", "--completed", "--response", missing},
	} {
		t.Run(name, func(t *testing.T) {
			r := (&harness{endpoint: "http://127.0.0.1:1"}).run(t, args...).want(t, exitUsage)
			if r.stderr == "" || r.stdout != "" {
				t.Errorf("want a reason, and nothing on stdout: %v", r)
			}
		})
	}
}

// putRecords writes records in every state, as of now, with the expiry
// setting of an hour, and an item that does not decode. It returns the
// keys by name.
func putRecords(t *testing.T, w *world, now time.Time) map[string]string {
	t.Helper()
	written := func(ago time.Duration) time.Time { return now.Add(-ago).Add(time.Hour) }
	keys := map[string]string{}
	for _, r := range []struct {
		name string
		rec  idempotency.Record
	}{
		{"live", idempotency.Record{Status: idempotency.StatusInProgress, Expiry: written(time.Minute), LeaseEnd: now.Add(time.Minute)}},
		{"stuck-young", idempotency.Record{Status: idempotency.StatusInProgress, Expiry: written(5 * time.Minute), LeaseEnd: now.Add(-4 * time.Minute)}},
		{"stuck-old", idempotency.Record{Status: idempotency.StatusInProgress, Expiry: written(50 * time.Minute), LeaseEnd: now.Add(-49 * time.Minute)}},
		{"done", idempotency.Record{Status: idempotency.StatusComplete, Expiry: written(10 * time.Minute), CompletedAt: now.Add(-10 * time.Minute), Response: []byte(`{}`)}},
		{"uncertain-young", idempotency.Record{Status: idempotency.StatusUncertain, Expiry: written(time.Minute)}},
		{"uncertain-old", idempotency.Record{Status: idempotency.StatusUncertain, Expiry: written(40 * time.Minute)}},
		// A function whose records expire after 96h: its lease ended 5
		// minutes ago; and one whose abandon policy holds the key past
		// its invocation's deadline, 10 minutes ago.
		{"stuck-96h", idempotency.Record{Status: idempotency.StatusInProgress, Expiry: now.Add(96*time.Hour - 6*time.Minute), LeaseEnd: now.Add(-5 * time.Minute)}},
		{"abandoned", idempotency.Record{Status: idempotency.StatusInProgress, Expiry: written(11 * time.Minute), LeaseEnd: written(11 * time.Minute), Deadline: now.Add(-10 * time.Minute)}},
		{"expired", idempotency.Record{Status: idempotency.StatusUncertain, Expiry: now.Add(-time.Minute)}},
	} {
		rec := r.rec
		rec.Key, rec.LeaseToken = "list#"+r.name, "token-"+r.name
		rec.Expiry = rec.Expiry.Truncate(time.Second)
		rec.LeaseEnd = rec.LeaseEnd.Truncate(time.Millisecond)
		rec.Deadline = rec.Deadline.Truncate(time.Millisecond)
		rec.CompletedAt = rec.CompletedAt.Truncate(time.Millisecond)
		if existing, err := w.store.Acquire(t.Context(), &rec, now.Add(-2*time.Hour)); err != nil || existing != nil {
			t.Fatalf("write %s: %v, %v", r.name, existing, err)
		}
		keys[r.name] = rec.Key
	}
	w.putCorrupted(t, "list#corrupted")
	return keys
}

// listed returns the keys of list's JSON lines.
func listed(t *testing.T, r result) []string {
	t.Helper()
	var keys []string
	for line := range strings.Lines(r.stdout) {
		var v recordView
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		keys = append(keys, strings.TrimPrefix(v.Key, "list#"))
	}
	return keys
}

func TestList(t *testing.T) {
	t.Parallel()
	for _, srv := range recordServers {
		t.Run(srv.name, func(t *testing.T) {
			w := srv.world(t)
			now := time.Now()
			putRecords(t, w, now)
			w.h.now = func() time.Time { return now }
			list := func(args ...string) []string {
				t.Helper()
				r := w.h.run(t, w.at("list", append([]string{"--json"}, args...)...)...).want(t, exitOK)
				keys := listed(t, r)
				slices.Sort(keys)
				return keys
			}
			for _, tt := range []struct {
				args []string
				want string
			}{
				{nil, "abandoned done live stuck-96h stuck-old stuck-young uncertain-old uncertain-young"},
				// Stuck: the invocation has ended, its lease or its
				// deadline (and AbandonGrace) past; its age is the time
				// since, whatever the function's expiry.
				{[]string{"--status", "stuck"}, "abandoned stuck-96h stuck-old stuck-young"},
				{[]string{"--status", "stuck", "--older-than", "1m"}, "abandoned stuck-96h stuck-old stuck-young"},
				{[]string{"--status", "stuck", "--older-than", "30m"}, "stuck-old"},
				{[]string{"--status", "stuck", "--older-than", "9m"}, "abandoned stuck-old"},
				{[]string{"--status", "inprogress"}, "abandoned live stuck-96h stuck-old stuck-young"},
				{[]string{"--status", "uncertain"}, "uncertain-old uncertain-young"},
				// An UNCERTAIN record does not say when it was written.
				{[]string{"--status", "uncertain", "--older-than", "30m"}, ""},
				{[]string{"--status", "completed", "--older-than", "9m"}, "done"},
				{[]string{"--status", "COMPLETED", "--older-than", "9m"}, "done"},
				{[]string{"--status", "completed", "--older-than", "11m"}, ""},
			} {
				if got := strings.Join(list(tt.args...), " "); got != tt.want {
					t.Errorf("list %v = %q, want %q", tt.args, got, tt.want)
				}
			}

			r := w.h.run(t, w.at("list", "--json", "--status", "stuck", "--older-than", "1m")...).want(t, exitOK)
			for line := range strings.Lines(r.stdout) {
				var v recordView
				json.Unmarshal([]byte(line), &v)
				want := map[string]time.Duration{"list#stuck-96h": 5 * time.Minute, "list#stuck-old": 49 * time.Minute, "list#stuck-young": 4 * time.Minute,
					"list#abandoned": 10*time.Minute - idempotency.AbandonGrace}[v.Key]
				if v.AgeSeconds == nil || time.Duration(*v.AgeSeconds)*time.Second < want-2*time.Second || time.Duration(*v.AgeSeconds)*time.Second > want+2*time.Second {
					t.Errorf("list's line for %s: age %v, want %v: %s", v.Key, v.AgeSeconds, want, line)
				}
			}
			if !strings.Contains(r.stderr, "4 records listed") || strings.Contains(r.stderr, "\r") {
				t.Errorf("stderr, not a terminal: %q", r.stderr)
			}
			r = w.h.run(t, w.at("list", "--json", "--status", "uncertain", "--older-than", "30m")...).want(t, exitOK)
			if !strings.Contains(r.stderr, "2 records of unknown age left out") {
				t.Errorf("list --older-than does not say what it left out: %q", r.stderr)
			}

			r = w.h.run(t, w.at("list")...).want(t, exitOK)
			wantContains(t, r, "KEY", "LEASE TOKEN", "list#stuck-old", "INPROGRESS", "token-done")
			if !strings.Contains(r.stderr, "list#corrupted") || !strings.Contains(r.stderr, "1 corrupted") {
				t.Errorf("the corrupted item is not reported: %q", r.stderr)
			}
			if got := len(listed(t, w.h.run(t, w.at("list", "--json", "--limit", "2")...))); got != 2 {
				t.Errorf("--limit 2 listed %d", got)
			}

			terminal := w.with()
			terminal.terminal = true
			if r := terminal.run(t, w.at("list", "--json")...); !strings.Contains(r.stderr, "\r\033[Kscanned ") {
				t.Errorf("no progress line on a terminal: %q", r.stderr)
			}
			w.h.run(t, w.at("list", "--status", "sideways")...).want(t, exitUsage)
		})
	}
}
