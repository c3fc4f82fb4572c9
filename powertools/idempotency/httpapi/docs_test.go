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

	"github.com/gopowertools/lambda/internal/testenv"
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

// documented is how a docs table row is answered by the adapter: what
// the handler returns, or a request header of its own, from a row's text.
// Each row of the tables must match one, so that a row added to the docs
// is checked too.
var documented = []struct {
	row    string // a part of the row's text that tells it apart
	errs   []error
	header string // the Idempotency-Key header; "" for "k1"
}{
	{row: "`*InProgressError", errs: []error{&idempotency.InProgressError{Key: "k", LeaseEnd: time.Now().Add(time.Minute)}}},
	{row: "`*PayloadConflictError", errs: []error{&idempotency.PayloadConflictError{Key: "k"}}},
	{row: "`*MissingKeyError", errs: []error{&idempotency.MissingKeyError{Expression: "order_id"}}},
	{row: "`*InvalidEventError", errs: []error{&idempotency.InvalidEventError{Expression: "@", Err: errors.New("not JSON")}}},
	{row: "`*UncertainError` with `Key` set", errs: []error{&idempotency.UncertainError{Key: "k"}}},
	{row: "`*UncertainError{Key, LeaseEnd, Err}`", errs: []error{&idempotency.UncertainError{Key: "k"}}},
	{row: "`*AbandonedError", errs: []error{&idempotency.AbandonedError{Key: "k"}}},
	{row: "`*ResponseNotStoredError", errs: []error{&idempotency.ResponseNotStoredError{Key: "k"}}},
	{row: "`*CorruptedRecordError", errs: []error{&idempotency.CorruptedRecordError{Key: "k"}}},
	{row: "`Op` `acquire`", errs: []error{&idempotency.PersistenceError{Op: "acquire", Key: "k"}, &idempotency.PersistenceError{Op: "reclaim", Key: "k"}}},
	{row: "`Op` `complete`", errs: []error{&idempotency.PersistenceError{Op: "complete", Key: "k", Err: &idempotency.CommitError{State: idempotency.CommitUnknown}}}},
	{row: `Op: "complete"`, errs: []error{&idempotency.PersistenceError{Op: "complete", Key: "k", Err: &idempotency.CommitError{State: idempotency.CommitLeaseLost}}}},
	{row: "`idempotency.Uncertain` ones included", errs: []error{errHandlerOwn, idempotency.Uncertain(errHandlerOwn)}},
	{row: "made with `idempotency.Uncertain`", errs: []error{idempotency.Uncertain(errHandlerOwn)}},
	{row: "the handler's own error, unchanged", errs: []error{errHandlerOwn}},
	{row: "refusal of the handler's staged writes", errs: []error{errHandlerOwn}},
	{row: "header is ambiguous or malformed", header: "k1,k2"},
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

// TestDocumentedStatuses reads the HTTP statuses that docs/errors.md and
// docs/http.md give each error, and checks them against what the adapter
// answers: the two pages once disagreed on a handler's own Uncertain
// error (503 in one, Lambda's 502 in the other), which the adapter
// returns to Lambda.
func TestDocumentedStatuses(t *testing.T) {
	type check struct {
		doc, row string
		want     answer
	}
	var checks []check
	for _, row := range table(t, "docs/errors.md", "| error | when | handler ran |") {
		status, ok := documentedStatus(row[len(row)-1])
		if ok {
			checks = append(checks, check{"errors.md", strings.Join(row, " | "), answer{status: status}})
		}
	}
	codeLink := regexp.MustCompile("^\\[`([a-z-]+)`\\]")
	for _, row := range table(t, "docs/http.md", "| outcome | middleware error | status |") {
		status, ok := documentedStatus(row[2])
		if !ok {
			continue // the handler's response, or the stored one
		}
		want := answer{status: status}
		if m := codeLink.FindStringSubmatch(row[4]); m != nil {
			want.code = m[1]
		}
		checks = append(checks, check{"http.md", strings.Join(row, " | "), want})
	}
	if len(checks) < 20 {
		t.Fatalf("read %d rows with a status from the two tables: has their layout changed?", len(checks))
	}
	for _, c := range checks {
		found := false
		for _, d := range documented {
			if !strings.Contains(c.row, d.row) {
				continue
			}
			found = true
			errs := d.errs
			if len(errs) == 0 {
				errs = []error{nil}
			}
			for _, err := range errs {
				got := answerTo(t, err, d.header)
				if got.status != c.want.status || (c.want.code != "" && got.code != c.want.code) {
					t.Errorf("%s says %+v for %q, the adapter answers %v with %+v", c.doc, c.want, c.row, err, got)
				}
			}
			break
		}
		if !found {
			t.Errorf("%s: the row %q matches no case of the test: add one", c.doc, c.row)
		}
	}
}

// documentedStatus reads a status cell: "409, `Retry-After`", "503
// Service Unavailable", "yours" and "none: returned as the Lambda
// error..." (lambdaError); ok is false for a cell with no status ("–",
// "the handler's response").
func documentedStatus(cell string) (status int, ok bool) {
	switch {
	case cell == "yours", strings.HasPrefix(cell, "none: returned as the Lambda error"):
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
