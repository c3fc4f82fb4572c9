package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/httpapi"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// lambdaError stands for the adapter's answer when it returns the error
// for Lambda to report (API Gateway then answers 502), in place of an
// HTTP status.
const lambdaError = 0

// answer is what the adapter answers to a request: a status and the
// problem's code, or lambdaError.
type answer struct {
	status int
	code   string // "" for no problem document
}

// documented is how a row of the docs' table is answered by the adapter:
// what the handler returns, or a request header of its own, from the
// row's first cell, the error. Each row of the table must match one, so
// that a row added to the docs is checked too.
var documented = []struct {
	row    string // a part of the row's first cell that tells it apart
	errs   []error
	header string // the Idempotency-Key header; "" for "k1"
}{
	{row: "`*InProgressError", errs: []error{&idempotency.InProgressError{Key: "k", LeaseEnd: time.Now().Add(time.Minute)}}},
	{row: "`*PayloadConflictError", errs: []error{&idempotency.PayloadConflictError{Key: "k"}}},
	{row: "`*MissingKeyError", errs: []error{&idempotency.MissingKeyError{Expression: "order_id"}}},
	{row: "`*InvalidEventError", errs: []error{&idempotency.InvalidEventError{Expression: "@", Err: errors.New("not JSON")}}},
	{row: "`*UncertainError{Key, LeaseEnd, Err}`", errs: []error{&idempotency.UncertainError{Key: "k"}}},
	{row: "`*AbandonedError", errs: []error{&idempotency.AbandonedError{Key: "k"}}},
	{row: "`*ResponseNotStoredError", errs: []error{&idempotency.ResponseNotStoredError{Key: "k"}}},
	{row: "`*CorruptedRecordError", errs: []error{&idempotency.CorruptedRecordError{Key: "k"}}},
	{row: "`Op` `acquire`", errs: []error{&idempotency.PersistenceError{Op: "acquire", Key: "k"}, &idempotency.PersistenceError{Op: "reclaim", Key: "k"}}},
	{row: `Op: "complete"`, errs: []error{
		&idempotency.PersistenceError{Op: "complete", Key: "k", Err: &idempotency.CommitError{State: idempotency.CommitLeaseLost}},
		&idempotency.PersistenceError{Op: "complete", Key: "k", Err: &idempotency.CommitError{State: idempotency.CommitUnknown}},
	}},
	{row: "made with `idempotency.Uncertain`", errs: []error{idempotency.Uncertain(errHandlerOwn)}},
	{row: "the handler's own error, unchanged", errs: []error{errHandlerOwn}},
	{row: "refusal of the handler's staged writes", errs: []error{errHandlerOwn}},
	{row: "the adapter's own answer", header: "k1,k2"},
}

var errHandlerOwn = errors.New("card declined")

// answerTo returns the adapter's answer when the handler returns err,
// or, with err nil, to a request whose Idempotency-Key is header.
func answerTo(t *testing.T, err error, header string) answer {
	t.Helper()
	h := httpapi.Wrap(idempotencytest.NewStore(), func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: 201}, err
	}, httpapi.WithKeyHeader(true), httpapi.WithOptions(idempotency.WithKeyPrefix("docs"), idempotency.WithLogger(slog.New(slog.DiscardHandler))))
	if header == "" {
		header = "k1"
	}
	resp, herr := h(context.Background(), events.APIGatewayV2HTTPRequest{
		Headers: map[string]string{"idempotency-key": header}, Body: `{}`,
		RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/p"}},
	})
	if herr != nil {
		return answer{status: lambdaError}
	}
	var p struct{ Code string }
	json.Unmarshal([]byte(resp.Body), &p)
	return answer{status: resp.StatusCode, code: p.Code}
}

// TestDocumentedStatuses reads the HTTP status and problem code that
// docs/errors.md gives each error, the one table of them that docs/http.md
// and the package doc refer to, and checks them against what the adapter
// answers, the handler's own Uncertain error included (returned to
// Lambda, which API Gateway answers with 502).
func TestDocumentedStatuses(t *testing.T) {
	t.Parallel()
	type check struct {
		row, error string // the row, and its first cell
		want       answer
	}
	var checks []check
	codeLink := regexp.MustCompile("\\[`([a-z-]+)`\\]")
	for _, row := range table(t, "docs/errors.md", "| error | when | handler ran |") {
		cell := row[len(row)-1]
		status, ok := documentedStatus(cell)
		if !ok {
			continue // a configuration error: no request is answered
		}
		want := answer{status: status}
		if m := codeLink.FindStringSubmatch(cell); m != nil {
			want.code = m[1]
		} else if status != lambdaError {
			t.Errorf("errors.md: the row %q gives a status without its problem code", strings.Join(row, " | "))
		}
		checks = append(checks, check{strings.Join(row, " | "), row[0], want})
	}
	if len(checks) < 14 {
		t.Fatalf("read %d rows with a status from errors.md's table: has its layout changed?", len(checks))
	}
	for _, c := range checks {
		found := false
		for _, d := range documented {
			if !strings.Contains(c.error, d.row) {
				continue
			}
			found = true
			errs := d.errs
			if len(errs) == 0 {
				errs = []error{nil}
			}
			for _, err := range errs {
				got := answerTo(t, err, d.header)
				if got != c.want {
					t.Errorf("errors.md says %+v for %q, the adapter answers %v with %+v", c.want, c.row, err, got)
				}
			}
			break
		}
		if !found {
			t.Errorf("errors.md: the row %q matches no case of the test: add one", c.row)
		}
	}
}

// documentedStatus reads a status cell: "409 [`in-progress`](...),
// `Retry-After`", or "yours" (lambdaError); ok is false for a cell with
// no status ("–").
func documentedStatus(cell string) (status int, ok bool) {
	if cell == "yours" {
		return lambdaError, true
	}
	digits := cell[:len(cell)-len(strings.TrimLeft(cell, "0123456789"))]
	if n, err := strconv.Atoi(digits); err == nil {
		return n, true
	}
	return 0, false
}

// table returns the body rows of the table of doc whose header row starts
// with header, each split into its cells.
func table(t *testing.T, doc, header string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), doc))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	in := false
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && strings.HasPrefix(line, "| ---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows = append(rows, cells)
		case in:
			return rows
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no table headed %q", doc, header)
	}
	return rows
}
