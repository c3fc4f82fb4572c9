package dynamo

import (
	"slices"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/golden"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// The golden records of this package: the DynamoDB items of every status
// and attribute the store writes, in testdata/golden, each written by one
// invocation at the golden clock (internal/testing/golden) and read back by a
// duplicate. docs/record-format.md describes them.

// goldenCases are the cases of every store, and the key layouts and
// modes of this one.
var goldenCases = append(slices.Clip(golden.Cases), golden.Case{
	Name:   goldenComposite,
	Opts:   []idempotency.Option{golden.Keyed},
	Fn:     golden.Respond(golden.Receipt("ord-composite")),
	Writes: []string{"inprogress-composite.json", "completed-composite.json"},
	Dups: map[string][]golden.Dup{
		"inprogress-composite.json": {{Event: golden.Order("ord-composite", 12.5), Want: golden.InProgress}},
		"completed-composite.json":  {{Event: golden.Order("ord-composite", 12.5), Want: golden.Replay(golden.Receipt("ord-composite"))}},
	},
}, golden.Case{
	// Keys, payload hashes and data as Powertools Python writes them.
	Name:   "python",
	Opts:   []idempotency.Option{golden.Keyed, golden.Validated, idempotency.WithCompatibility(idempotency.PowertoolsPython), idempotency.WithPythonHandler("app.lambda_handler")},
	Fn:     golden.Respond(golden.Receipt("ord-python")),
	Writes: []string{"", "completed-python.json"},
	Dups: map[string][]golden.Dup{
		"completed-python.json": {{Event: golden.Order("ord-python", 12.5), Want: golden.Replay(golden.Receipt("ord-python"))}},
	},
}, golden.Case{
	// ... and as Powertools TypeScript writes them: data as a map, read
	// back as JSON with the members in key order.
	Name:   "typescript",
	Opts:   []idempotency.Option{golden.Keyed, golden.Validated, idempotency.WithCompatibility(idempotency.PowertoolsTypeScript)},
	Fn:     golden.Respond(golden.Receipt("ord-typescript")),
	Writes: []string{"", "completed-typescript.json"},
	Dups: map[string][]golden.Dup{
		"completed-typescript.json": {{Event: golden.Order("ord-typescript", 12.5),
			Want: golden.Replay(`{"amount":12.5,"items":[{"qty":2,"sku":"A-1"}],"none":null,"note":"café ✓ <b>&","ok":true,"order_id":"ord-typescript","status":"charged"}`)}},
	},
})

// goldenComposite is the case whose table has a sort key.
const goldenComposite = "composite"

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
		t.Run(c.Name, func(t *testing.T) {
			var wire golden.Wire
			tableOpts := simple
			if c.Name == goldenComposite {
				tableOpts = composite
			}
			store, err := New(srv.client(t, wire.Option), tableOpts...)
			if err != nil {
				t.Fatal(err)
			}
			golden.Seed(t)
			if _, _, err := golden.Invoke(store, c.Event(), c.Fn, c.Opts...); err != nil && c.Name != "uncertain" {
				t.Fatal(err)
			}
			items := wire.Items(t)
			if len(items) != len(c.Writes) {
				t.Fatalf("the invocation wrote %d items, want %d:\n%s", len(items), len(c.Writes), items)
			}
			for i, name := range c.Writes {
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
	golden.CheckRead(t, golden.Files(goldenCases))
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			endpoint := testenv.Endpoint(t, srv.env)
			simple, composite := goldenTables(t, srv)
			for _, c := range goldenCases {
				tableOpts := simple
				if c.Name == goldenComposite {
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
				for _, file := range c.Writes {
					if file == "" {
						continue
					}
					golden.PutItem(t, endpoint, o.TableName, golden.Read(t, file))
					for _, d := range c.Dups[file] {
						if got := golden.Duplicate(store, d.Event, c.Opts...); got != d.Want {
							t.Errorf("%s: a duplicate of %s got\n\t%s\nwant\n\t%s", file, d.Event, got, d.Want)
						}
					}
				}
			}
		})
	}
}
