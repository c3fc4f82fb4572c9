package golden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// The golden file of a DynamoDB item is the JSON of its attributes as
// DynamoDB's wire protocol writes them ({"id": {"S": "..."}, "expiration":
// {"N": "..."}, "data": {"B": "<base64>"}}), in the form of JSON: the
// bytes the SDK sends, which are also what a server sends back.

// Wire records the DynamoDB requests of a client, as the SDK writes them.
// Its zero value is ready to use.
type Wire struct {
	mu   sync.Mutex
	reqs []wireRequest
}

type wireRequest struct {
	op   string // PutItem, GetItem...
	body []byte
}

// Option installs w on a client's options: every request the client
// sends is recorded.
func (w *Wire) Option(o *dynamodb.Options) { o.HTTPClient = recorder{o.HTTPClient, w} }

type recorder struct {
	next interface {
		Do(*http.Request) (*http.Response, error)
	}
	w *Wire
}

func (r recorder) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		_, op, _ := strings.Cut(req.Header.Get("X-Amz-Target"), ".")
		r.w.mu.Lock()
		r.w.reqs = append(r.w.reqs, wireRequest{op, body})
		r.w.mu.Unlock()
	}
	return r.next.Do(req)
}

// Items returns the item of each PutItem request since the last call, in
// the form of JSON, and forgets the requests.
func (w *Wire) Items(t testing.TB) [][]byte {
	t.Helper()
	w.mu.Lock()
	reqs := w.reqs
	w.reqs = nil
	w.mu.Unlock()
	var items [][]byte
	for _, r := range reqs {
		if r.op != "PutItem" {
			continue
		}
		var in struct{ Item json.RawMessage }
		if err := json.Unmarshal(r.body, &in); err != nil || in.Item == nil {
			t.Fatalf("golden: a PutItem request without an item (%v): %s", err, r.body)
		}
		items = append(items, JSON(t, in.Item))
	}
	return items
}

// PutItem writes item, a golden file's JSON, into table on the server at
// endpoint, with a request written by hand: the server gets the file's
// bytes, with no decoding of ours in between.
func PutItem(t testing.TB, endpoint, table string, item []byte) {
	t.Helper()
	call(t, endpoint, "PutItem", fmt.Sprintf(`{"TableName":%q,"Item":%s}`, table, item))
}

// Scan returns every item of table on the server at endpoint, each in
// the form of JSON, as the server sends them.
func Scan(t testing.TB, endpoint, table string) [][]byte {
	t.Helper()
	var out struct{ Items []json.RawMessage }
	if err := json.Unmarshal(call(t, endpoint, "Scan", fmt.Sprintf(`{"TableName":%q,"ConsistentRead":true}`, table)), &out); err != nil {
		t.Fatalf("golden: Scan: %v", err)
	}
	items := make([][]byte, len(out.Items))
	for i, it := range out.Items {
		items[i] = JSON(t, it)
	}
	return items
}

// call sends a request of DynamoDB's JSON protocol to the test server at
// endpoint, which checks no signature, and returns the answer's body.
func call(t testing.TB, endpoint, op, body string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	req.Header.Set("X-Amz-Date", "20250601T120000Z")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20250601/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("golden: %s: %v", op, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("golden: %s: %s %v: %s", op, resp.Status, err, b)
	}
	return b
}
