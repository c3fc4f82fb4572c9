package dynamo

import (
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/golden"
	"github.com/gopowertools/lambda/internal/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// The golden records of this package: the DynamoDB items of every status
// and attribute the store writes, in testdata/golden, each written by one
// invocation at the golden clock (internal/golden) and read back by a
// duplicate. docs/record-format.md describes them.

// goldenCase is one invocation whose writes are golden files.
type goldenCase struct {
	name      string
	opts      []idempotency.Option
	composite bool // the table has a sort key
	fn        golden.Func
	// writes names the golden file of each PutItem the invocation sends,
	// in order; "" leaves one out (an item another case has already).
	writes []string
	// reads are what duplicates get from each file: loaded into a table,
	// each event in turn must get its outcome.
	reads []goldenRead
}

type goldenRead struct {
	file string
	dups []goldenDup
}

type goldenDup struct{ event, want string }

var (
	keyed     = idempotency.WithEventKey("order_id")
	validated = idempotency.WithPayloadValidation("[amount,currency]")
)

var goldenCases = []goldenCase{{
	name:   "plain",
	opts:   []idempotency.Option{keyed},
	fn:     golden.Respond(golden.Receipt("ord-plain")),
	writes: []string{"inprogress.json", "completed.json"},
	reads: []goldenRead{
		{"inprogress.json", []goldenDup{{golden.Order("ord-plain", 12.5), golden.InProgress}}},
		{"completed.json", []goldenDup{{golden.Order("ord-plain", 12.5), golden.Replay(golden.Receipt("ord-plain"))}}},
	},
}, {
	name:   "validation",
	opts:   []idempotency.Option{keyed, validated},
	fn:     golden.Respond(golden.Receipt("ord-validation")),
	writes: []string{"inprogress-validation.json", "completed-validation.json"},
	reads: []goldenRead{
		{"inprogress-validation.json", []goldenDup{
			{golden.Order("ord-validation", 99), "PayloadConflictError stored_hash=2f187853cebc55a88a208f55f1a314cec78c7b31e431c62b31d0c3cdd6eca931"},
			{golden.Order("ord-validation", 12.5), golden.InProgress},
		}},
		{"completed-validation.json", []goldenDup{
			{golden.Order("ord-validation", 99), "PayloadConflictError stored_hash=2f187853cebc55a88a208f55f1a314cec78c7b31e431c62b31d0c3cdd6eca931"},
			{golden.Order("ord-validation", 12.5), golden.Replay(golden.Receipt("ord-validation"))},
		}},
	},
}, {
	name:   "uncertain",
	opts:   []idempotency.Option{keyed},
	fn:     golden.Unsure,
	writes: []string{"", "uncertain.json"},
	reads: []goldenRead{
		{"uncertain.json", []goldenDup{{golden.Order("ord-uncertain", 12.5), "UncertainError lease_end=-"}}},
	},
}, {
	// Under AbandonBlock the lease lasts until expiry, and the record
	// keeps the invocation's deadline.
	name:   "abandon-block",
	opts:   []idempotency.Option{keyed, idempotency.WithAbandonPolicy(idempotency.AbandonBlock)},
	fn:     golden.Respond(golden.Receipt("ord-abandon-block")),
	writes: []string{"inprogress-abandon-block.json", ""},
	reads: []goldenRead{
		{"inprogress-abandon-block.json", []goldenDup{{golden.Order("ord-abandon-block", 12.5), golden.InProgress}}},
	},
}, {
	// A response over DynamoDB's 400 KB: the record is completed
	// without it.
	name:   "response-omitted",
	opts:   []idempotency.Option{keyed},
	fn:     golden.Respond(`"` + strings.Repeat("x", maxItemSize) + `"`),
	writes: []string{"", "completed-response-omitted.json"},
	reads: []goldenRead{
		{"completed-response-omitted.json", []goldenDup{{golden.Order("ord-response-omitted", 12.5), `ResponseNotStoredError reason="too large for the store"`}}},
	},
}, {
	name:      "composite",
	opts:      []idempotency.Option{keyed},
	composite: true,
	fn:        golden.Respond(golden.Receipt("ord-composite")),
	writes:    []string{"inprogress-composite.json", "completed-composite.json"},
	reads: []goldenRead{
		{"inprogress-composite.json", []goldenDup{{golden.Order("ord-composite", 12.5), golden.InProgress}}},
		{"completed-composite.json", []goldenDup{{golden.Order("ord-composite", 12.5), golden.Replay(golden.Receipt("ord-composite"))}}},
	},
}, {
	// Keys, payload hashes and data as Powertools Python writes them.
	name:   "python",
	opts:   []idempotency.Option{keyed, validated, idempotency.WithCompatibility(idempotency.PowertoolsPython), idempotency.WithPythonHandler("app.lambda_handler")},
	fn:     golden.Respond(golden.Receipt("ord-python")),
	writes: []string{"", "completed-python.json"},
	reads: []goldenRead{
		{"completed-python.json", []goldenDup{{golden.Order("ord-python", 12.5), golden.Replay(golden.Receipt("ord-python"))}}},
	},
}, {
	// ... and as Powertools TypeScript writes them: data as a map.
	name:   "typescript",
	opts:   []idempotency.Option{keyed, validated, idempotency.WithCompatibility(idempotency.PowertoolsTypeScript)},
	fn:     golden.Respond(golden.Receipt("ord-typescript")),
	writes: []string{"", "completed-typescript.json"},
	reads: []goldenRead{
		// Read back as JSON with the members in key order.
		{"completed-typescript.json", []goldenDup{{golden.Order("ord-typescript", 12.5), golden.Replay(`{"amount":12.5,"items":[{"qty":2,"sku":"A-1"}],"none":null,"note":"café ✓ <b>&","ok":true,"order_id":"ord-typescript","status":"charged"}`)}}},
	},
}}

// goldenFunction is the Lambda function of the golden records: the key
// prefix of every mode but PowertoolsPython's, which adds the handler.
const goldenFunction = "golden"

// goldenTables makes a table of each layout on client.
func goldenTables(t *testing.T, srv server) (simple, composite []func(*Options)) {
	t.Helper()
	client := srv.client(t)
	return newTable(t, client), newTable(t, client, func(o *Options) { o.SortKeyAttr = "sk"; o.StaticPartitionKey = "idempotency#" + goldenFunction })
}

// TestGoldenWrite: for the same event, clock and lease token, this
// version writes the items of testdata/golden, byte for byte (-update
// rewrites them).
func TestGoldenWrite(t *testing.T) {
	srv := servers[0] // the requests do not depend on the server
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", goldenFunction)
	simple, composite := goldenTables(t, srv)
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			var wire golden.Wire
			tableOpts := simple
			if c.composite {
				tableOpts = composite
			}
			store, err := New(srv.client(t, wire.Option), tableOpts...)
			if err != nil {
				t.Fatal(err)
			}
			golden.Seed(t)
			if _, _, err := golden.Invoke(store, golden.Order("ord-"+c.name, 12.5), c.fn, c.opts...); err != nil && c.name != "uncertain" {
				t.Fatal(err)
			}
			items := wire.Items(t)
			if len(items) != len(c.writes) {
				t.Fatalf("the invocation wrote %d items, want %d:\n%s", len(items), len(c.writes), items)
			}
			for i, name := range c.writes {
				if name != "" {
					golden.Check(t, name, items[i])
				}
			}
		})
	}
}

// TestGoldenRead: each item of testdata/golden, put in a table as the
// file holds it, gives a duplicate the outcome its case names, on both
// servers (on dynalite, without ALL_OLD, through the GetItem fallback).
func TestGoldenRead(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", goldenFunction)
	var read []string
	for _, c := range goldenCases {
		for _, r := range c.reads {
			read = append(read, r.file)
		}
	}
	golden.CheckRead(t, read)
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			endpoint := testenv.Endpoint(t, srv.env)
			simple, composite := goldenTables(t, srv)
			for _, c := range goldenCases {
				tableOpts := simple
				if c.composite {
					tableOpts = composite
				}
				o, err := options(tableOpts)
				if err != nil {
					t.Fatal(err)
				}
				store, err := New(srv.client(t), tableOpts...)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range c.reads {
					golden.PutItem(t, endpoint, o.TableName, golden.Read(t, r.file))
					for _, d := range r.dups {
						if got := golden.Duplicate(store, d.event, c.opts...); got != d.want {
							t.Errorf("%s: a duplicate of %s got\n\t%s\nwant\n\t%s", r.file, d.event, got, d.want)
						}
					}
				}
			}
		})
	}
}
