package interop

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/jmespath"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// keyCase is one key computation: the event's JSON text, the key and
// payload validation expressions, and the hash, as hashlib and Node's
// crypto name it. The scripts take it as a JSON line.
type keyCase struct {
	Event      string `json:"event"`
	Expr       string `json:"expr"`
	Validation string `json:"validation,omitempty"`
	Hash       string `json:"hash"`
	name       string // names the case in failures
}

// keyResult is what a runtime computed for a keyCase: the key, "" with
// Skip when the event has none (the handler runs without idempotency),
// and the payload hash; or an Error.
type keyResult struct {
	Key     string `json:"key"`
	Payload string `json:"payload"`
	Skip    bool   `json:"skip"`
	Error   string `json:"error"`
}

var hashes = map[string]crypto.Hash{"md5": crypto.MD5, "sha256": crypto.SHA256}

// goKeys computes the cases as a Go handler in compat mode does, with the
// key prefix "p" the scripts use.
func goKeys(t *testing.T, compat idempotency.Compatibility, cases []keyCase) []keyResult {
	t.Helper()
	handlers := map[[3]string]*idempotency.Handler{}
	results := make([]keyResult, len(cases))
	for i, c := range cases {
		id := [3]string{c.Expr, c.Validation, c.Hash}
		h := handlers[id]
		if h == nil {
			var err error
			h, err = idempotency.New(idempotencytest.NewStore(), func(context.Context, json.RawMessage) (any, error) { return nil, nil },
				idempotency.WithCompatibility(compat), idempotency.WithHash(hashes[c.Hash]), idempotency.WithKeyPrefix("p"),
				idempotency.WithEventKey(c.Expr), idempotency.WithPayloadValidation(c.Validation))
			if err != nil {
				t.Fatal(err)
			}
			handlers[id] = h
		}
		key, payload, err := h.KeyOf([]byte(c.Event))
		switch {
		case err != nil:
			results[i] = keyResult{Error: err.Error()}
		case key == "":
			results[i] = keyResult{Skip: true}
		default:
			results[i] = keyResult{Key: key, Payload: payload}
		}
	}
	return results
}

// compareKeys runs the cases through the runtime and checks that wherever
// the Go handler finds a key, the runtime finds the same key and payload
// hash. Where Go finds no key or refuses the event, what the runtime does
// is counted, not compared: docs/comparison.md lists those differences.
func compareKeys(t *testing.T, rt runtime, cases []keyCase) (compared int) {
	t.Helper()
	want := batch[keyCase, keyResult](t, rt, "keys", cases)
	got := goKeys(t, rt.compat, cases)
	var noKey, noKeyThere, refused, failures int
	for i, c := range cases {
		g, w := got[i], want[i]
		switch {
		case g.Error != "":
			if refused++; refused <= 3 {
				t.Logf("%s: Go refuses the event (%s); %s gives %+v", c.name, g.Error, rt.name, w)
			}
			continue
		case g.Skip:
			noKey++
			continue
		case w.Skip && pythonNoKey(t, c):
			// Documented: Python takes an object whose members are all
			// null (a multi-select hash with every path absent) for no
			// key; Go keys it.
			noKeyThere++
			continue
		}
		compared++
		if g.Key != w.Key || g.Payload != w.Payload {
			failures++
			if failures <= 10 {
				t.Errorf("%s: Go key %q payload %q; %s key %q payload %q (error %q)\nevent: %s", c.name, g.Key, g.Payload, rt.name, w.Key, w.Payload, w.Error, c.Event)
			}
		}
	}
	if failures > 10 {
		t.Errorf("... %d mismatches in all", failures)
	}
	t.Logf("%s: %d cases, %d keys compared, %d with no key in Go, %d with no key in %s alone, %d refused by Go", rt.name, len(cases), compared, noKey, noKeyThere, rt.name, refused)
	return compared
}

// pythonNoKey reports whether the key expression of c selects an object
// whose members are all null, which Powertools Python takes for no key.
func pythonNoKey(t *testing.T, c keyCase) bool {
	t.Helper()
	expr := c.Expr
	if expr == "" {
		expr = "@"
	}
	v, err := jmespath.MustCompile(expr).SearchJSON([]byte(c.Event))
	if err != nil {
		t.Fatal(err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, m := range obj {
		if m != nil {
			return false
		}
	}
	return true
}

// docExpressions are the key expressions the documentation shows, the
// envelopes of the jmespath package, and some that select the fixtures'
// own fields; "" is the whole event.
var docExpressions = []string{
	"",
	"order_id",
	"amount",
	"detail.settlement_id",
	`headers."idempotency-key"`,
	`headers."Idempotency-Key"`,
	"powertools_json(body).order_id",
	"powertools_json(body).[amount,currency]",
	"powertools_json(body).[order_id,total]",
	"powertools_json(body).items",
	"[customer, amount, currency]",
	"detail.[account_id,amount_cents,currency]",
	"detail.[order_id,total]",
	"requestContext",
	"requestContext.authorizer.jwt.claims",
	"{order: powertools_json(body).order_id, request: requestContext.requestId}",
	"Records[*].messageId",
	"Records[*].powertools_json(body).order_id",
	"Records[*].powertools_json(body).[order_id,total]",
	jmespath.EnvelopeAPIGatewayREST,
	jmespath.EnvelopeSQS,
	jmespath.EnvelopeSNS,
	jmespath.EnvelopeEventBridge,
	jmespath.EnvelopeKinesisDataStream,
	jmespath.EnvelopeCloudWatchLogs,
	jmespath.EnvelopeS3SQS,
	jmespath.EnvelopeS3SNSSQS,
	jmespath.EnvelopeS3KinesisFirehose,
	jmespath.EnvelopeS3SNSKinesisFirehose,
	jmespath.EnvelopeS3EventBridgeSQS,
}

// fixtureCases are the event fixtures of jmespath/testdata/events, each
// with every expression as the key, and with the whole event as the key
// and every expression as payload validation.
func fixtureCases(t *testing.T) []keyCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "jmespath", "testdata", "events", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no event fixtures: %v", err)
	}
	var cases []keyCase
	for _, f := range files {
		event, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		for _, expr := range docExpressions {
			cases = append(cases,
				keyCase{Event: string(event), Expr: expr, Hash: "md5", name: fmt.Sprintf("%s key %q", name, expr)},
				keyCase{Event: string(event), Validation: expr, Hash: "md5", name: fmt.Sprintf("%s validation %q", name, expr)})
		}
		cases = append(cases, keyCase{Event: string(event), Hash: "sha256", name: name + " sha256"})
	}
	return cases
}

// TestFixtureKeys compares the keys of every event fixture, under every
// documented expression, with both runtimes'.
func TestFixtureKeys(t *testing.T) {
	t.Parallel()
	cases := fixtureCases(t)
	for _, rt := range runtimes(t) {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			if n := compareKeys(t, rt, cases); n < len(cases)/3 {
				t.Errorf("only %d of %d cases compared: the expressions select too little of the fixtures", n, len(cases))
			}
		})
	}
}

// TestGeneratedKeys compares the keys of generated events: nested objects
// and arrays, numbers with fractions and exponents (those both runtimes
// read exactly: the number tests have the others), non-ASCII text, every
// escape, member names that JavaScript orders specially. The seed is logged; set
// INTEROP_SEED to replay one.
func TestGeneratedKeys(t *testing.T) {
	t.Parallel()
	seed := newSeed(t)
	g := newGenerator(seed)
	const n = 2000
	var cases []keyCase
	for i := range n {
		event := g.event()
		c := keyCase{Event: event, Hash: "md5", name: fmt.Sprintf("event %d (seed %d)", i, seed)}
		switch i % 5 {
		case 1:
			c.Hash = "sha256"
		case 2:
			c.Expr, c.Validation = "a", "b"
		}
		cases = append(cases, c)
	}
	for _, rt := range runtimes(t) {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			if got := compareKeys(t, rt, cases); got < n*9/10 {
				t.Errorf("only %d of %d generated events compared", got, n)
			}
		})
	}
}

// TestKeysRefusedForTypeScript checks the one event TypeScript mode
// refuses: an object with two names of the same lowercase form that
// encoding/json's case folding does not match ("İ" and "i̇"), which
// deepSort's comparator orders by the steps of the sort. Powertools
// TypeScript keys such an event anyway.
func TestKeysRefusedForTypeScript(t *testing.T) {
	t.Parallel()
	h := idempotency.Wrap(idempotencytest.NewStore(), func(context.Context, json.RawMessage) (any, error) { return nil, nil },
		idempotency.WithCompatibility(idempotency.PowertoolsTypeScript), idempotency.WithKeyPrefix("p"))
	_, _, err := h.KeyOf([]byte(`{"İ":1,"i̇":2}`))
	if !errors.As(err, new(*idempotency.InvalidEventError)) {
		t.Fatalf("KeyOf error = %v, want *InvalidEventError", err)
	}
	if _, _, err := h.KeyOf([]byte(`{"İ":1,"i":2}`)); err != nil {
		t.Fatalf("KeyOf of distinct lowercase names: %v", err)
	}
}

// TestRefusedValuesMergeInPowertools takes pairs of events that Go
// refuses, and shows on the real runtimes why: Powertools gives both one
// key, or one payload hash, so that its function would answer the second
// with the first one's response. TypeScript leaves a member named
// __proto__ out of the text it hashes; both write every infinity that
// sum reaches alike (Python as Infinity, TypeScript as null).
func TestRefusedValuesMergeInPowertools(t *testing.T) {
	t.Parallel()
	pairs := []struct {
		name   string
		modes  []idempotency.Compatibility
		a, b   keyCase
		sameAs func(a, b keyResult) bool
	}{
		{
			name:   "__proto__",
			modes:  []idempotency.Compatibility{idempotency.PowertoolsTypeScript},
			a:      keyCase{Event: `{"a":{"id":"x","__proto__":1}}`, Expr: "a", Hash: "md5"},
			b:      keyCase{Event: `{"a":{"id":"x","__proto__":2}}`, Expr: "a", Hash: "md5"},
			sameAs: func(a, b keyResult) bool { return a.Key != "" && a.Key == b.Key },
		},
		{
			name:   "sum to infinity",
			modes:  []idempotency.Compatibility{idempotency.PowertoolsPython, idempotency.PowertoolsTypeScript},
			a:      keyCase{Event: `{"id":"x","a":[1e308,1e308]}`, Expr: "id", Validation: "sum(a)", Hash: "md5"},
			b:      keyCase{Event: `{"id":"x","a":[1.5e308,1e308]}`, Expr: "id", Validation: "sum(a)", Hash: "md5"},
			sameAs: func(a, b keyResult) bool { return a.Payload != "" && a.Key == b.Key && a.Payload == b.Payload },
		},
	}
	for _, rt := range runtimes(t) {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			for _, p := range pairs {
				if !slices.Contains(p.modes, rt.compat) {
					continue
				}
				theirs := batch[keyCase, keyResult](t, rt, "keys", []keyCase{p.a, p.b})
				if !p.sameAs(theirs[0], theirs[1]) {
					t.Errorf("%s: %s keeps the two apart: %+v, %+v", p.name, rt.name, theirs[0], theirs[1])
				}
				for _, r := range goKeys(t, rt.compat, []keyCase{p.a, p.b}) {
					if r.Error == "" {
						t.Errorf("%s: Go keys %+v, want a refusal", p.name, r)
					}
				}
			}
		})
	}
}
