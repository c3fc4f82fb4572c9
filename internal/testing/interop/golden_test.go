package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/internal/testing/golden"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// The records Powertools for AWS Lambda writes, in testdata/golden: what
// a Go function in a compatibility mode must keep reading, whatever this
// library's own format becomes. They carry the real clock of the run that
// wrote them, so they are only read back, never compared with a new
// run's; -update writes them anew with the installed Powertools.

// powertoolsRecord is a golden file: the item a Powertools function
// wrote, as the server sends it back (Scan), and the clock just before
// and just after its invocation.
type powertoolsRecord struct {
	Before time.Time       `json:"before"`
	After  time.Time       `json:"after"`
	Item   json.RawMessage `json:"item"`
}

// powertoolsLease is the time a Powertools function's context has left
// (testdata/function.py, function.mjs): the lease of its records.
const powertoolsLease = 30 * time.Second

// goldenStatuses are the records of each runtime: its COMPLETED record,
// and the INPROGRESS record of an invocation whose handler is running.
var goldenStatuses = []string{"completed", "inprogress"}

func goldenFile(rt, status string) string { return rt + "-" + status + ".json" }

func goldenID(rt, status string) string { return "ord-golden-" + rt + "-" + status }

// TestGoldenPowertoolsWrite writes the records of testdata/golden with
// the installed Powertools runtimes on moto, with -update only.
func TestGoldenPowertoolsWrite(t *testing.T) {
	t.Parallel()
	if !golden.Updating() {
		t.Skip("the Powertools records are written with -update only: they carry the real clock")
	}
	client := testenv.DynamoDB(t, testenv.MotoEnv)
	endpoint := os.Getenv(testenv.MotoEnv)
	for _, rt := range runtimes(t) {
		f := startFunction(t, rt, endpoint)
		for _, status := range goldenStatuses {
			table := fmt.Sprintf("golden-%s-%s-%d", rt.name, status, time.Now().UnixNano())
			if err := dynamo.CreateTable(t.Context(), client, func(o *dynamo.Options) { o.TableName = table }); err != nil {
				t.Fatal(err)
			}
			id := goldenID(rt.name, status)
			req := request{Table: table, Expr: keyExpr, Validation: validation, Event: order(id, 12.5), Response: json.RawMessage(receipt(id, "charged")), ID: "golden"}
			rec := powertoolsRecord{Before: time.Now().UTC()}
			req.Op = map[string]string{"completed": "invoke", "inprogress": "hold"}[status]
			if a := f.do(t, req); a.Error != "" || (status == "inprogress" && !a.Held) {
				t.Fatalf("%s %s: %+v", rt.name, req.Op, a)
			}
			rec.After = time.Now().UTC()
			items := golden.Scan(t, endpoint, table)
			if len(items) != 1 {
				t.Fatalf("%s wrote %d items, want 1", rt.name, len(items))
			}
			rec.Item = items[0]
			if status == "inprogress" {
				if a := f.do(t, request{Op: "release", ID: "golden"}); a.Error != "" {
					t.Fatalf("%s release: %+v", rt.name, a)
				}
			}
			golden.Write(t, goldenFile(rt.name, status), golden.Marshal(t, rec))
		}
	}
}

// TestGoldenPowertoolsRead: a Go function in each runtime's compatibility
// mode reads the records that runtime wrote, put in a table of moto as
// the files hold them: it replays a COMPLETED record's response, finds a
// payload conflict with it, and waits for an INPROGRESS record's lease,
// at a clock within the run that wrote them.
func TestGoldenPowertoolsRead(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", functionName)
	var read []string
	for _, rt := range []string{"python", "typescript"} {
		for _, status := range goldenStatuses {
			read = append(read, goldenFile(rt, status))
		}
	}
	golden.CheckRead(t, read)
	client := testenv.DynamoDB(t, testenv.MotoEnv)
	endpoint := os.Getenv(testenv.MotoEnv)
	table := fmt.Sprintf("golden-read-%d", time.Now().UnixNano())
	if err := dynamo.CreateTable(t.Context(), client, func(o *dynamo.Options) { o.TableName = table }); err != nil {
		t.Fatal(err)
	}
	store, err := dynamo.New(client, func(o *dynamo.Options) { o.TableName = table })
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range []struct {
		name   string
		compat idempotency.Compatibility
	}{{"python", idempotency.PowertoolsPython}, {"typescript", idempotency.PowertoolsTypeScript}} {
		for _, status := range goldenStatuses {
			file := goldenFile(rt.name, status)
			t.Run(file, func(t *testing.T) {
				var rec powertoolsRecord
				if err := json.Unmarshal(golden.Read(t, file), &rec); err != nil {
					t.Fatal(err)
				}
				golden.PutItem(t, endpoint, table, rec.Item)
				opts := []idempotency.Option{
					idempotency.WithCompatibility(rt.compat),
					idempotency.WithEventKey(keyExpr),
					idempotency.WithPayloadValidation(validation),
					idempotency.WithClock(func() time.Time { return rec.After }),
				}
				if rt.compat == idempotency.PowertoolsPython {
					opts = append(opts, idempotency.WithPythonHandler(pythonModule))
				}
				id := goldenID(rt.name, status)
				if got := golden.Duplicate(store, order(id, 99), opts...); !strings.HasPrefix(got, "PayloadConflictError ") {
					t.Errorf("a duplicate with another amount got %s, want a PayloadConflictError", got)
				}
				got := golden.Duplicate(store, order(id, 12.5), opts...)
				switch status {
				case "completed":
					// Powertools does not store when the record completed.
					resp, ok := strings.CutPrefix(got, "replay completed_at=- ")
					if !ok || !sameJSON(t, []byte(resp), []byte(receipt(id, "charged"))) {
						t.Errorf("a duplicate got %s, want the replay of %s", got, receipt(id, "charged"))
					}
				case "inprogress":
					// The lease ends 30 s after the invocation starts, as
					// the runtime's clock reads it in between.
					end, ok := strings.CutPrefix(got, "InProgressError lease_end=")
					at, err := time.Parse(time.RFC3339Nano, end)
					if !ok || err != nil || at.Before(rec.Before.Add(powertoolsLease).Truncate(time.Millisecond)) || at.After(rec.After.Add(powertoolsLease)) {
						t.Errorf("a duplicate got %s, want an InProgressError whose lease ends %v after the invocation, between %s and %s",
							got, powertoolsLease, rec.Before.Add(powertoolsLease).Format(time.RFC3339Nano), rec.After.Add(powertoolsLease).Format(time.RFC3339Nano))
					}
				}
				t.Logf("a duplicate got %s", got)
			})
		}
	}
}
