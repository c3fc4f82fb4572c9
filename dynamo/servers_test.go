package dynamo

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// server is a DynamoDB-compatible server the tests run on.
type server struct {
	name string
	env  string
	// allOld reports whether the server returns the existing item when a
	// condition fails (ReturnValuesOnConditionCheckFailure=ALL_OLD).
	allOld bool
}

var servers = []server{
	{"moto", testenv.MotoEnv, true},
	{"dynalite", testenv.DynaliteEnv, false},
}

// client returns a client for the server, or skips. moto's own server is
// not atomic across its threads; make test runs it one request at a time
// (scripts/moto-serialized.py), which internal/testing/testenv's storm test proves.
func (srv server) client(t *testing.T, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	t.Helper()
	return testenv.DynamoDB(t, srv.env, optFns...)
}

// keyModes are the two table layouts.
var keyModes = []struct {
	name string
	opt  func(*Options)
}{
	{"simple", func(*Options) {}},
	{"composite", func(o *Options) { o.SortKeyAttr = "sk"; o.StaticPartitionKey = "idempotency#test-function" }},
}

// requests counts the HTTP requests a client sends, by operation name.
// Its hook sits inside the SDK's retry loop, so a retried request counts
// once per attempt.
type requests struct {
	mu sync.Mutex
	n  map[string]int
}

// option installs the counter on a client.
func (r *requests) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("countRequests",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				r.mu.Lock()
				if r.n == nil {
					r.n = make(map[string]int)
				}
				r.n[awsmiddleware.GetOperationName(ctx)]++
				r.mu.Unlock()
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
	})
}

// take returns the counts since the last take and starts again.
func (r *requests) take() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.n
	r.n = nil
	if n == nil {
		n = map[string]int{}
	}
	return n
}

// want fails the test unless the requests since the last take are want.
func (r *requests) want(t *testing.T, what string, want map[string]int) {
	t.Helper()
	if got := r.take(); !maps.Equal(got, want) {
		t.Errorf("%s sent %v, want %v", what, got, want)
	}
}

// newTable creates a fresh table on client for the options opts and
// deletes it when the test ends. It returns the options with its name.
// It does not turn on TTL: dynalite has no UpdateTimeToLive.
func newTable(t *testing.T, client *dynamodb.Client, opts ...func(*Options)) []func(*Options) {
	t.Helper()
	name := fmt.Sprintf("idem-%s-%d", strings.NewReplacer("/", "-", "#", "-").Replace(t.Name()), time.Now().UnixNano())
	if len(name) > 200 {
		name = name[len(name)-200:]
	}
	opts = append(opts, func(o *Options) { o.TableName = name })
	o, err := options(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := createTable(ctx, client, &o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// t.Context is done by now.
		if _, err := client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
			t.Logf("delete table %s: %v", name, err)
		}
	})
	return opts
}

// newStore returns a Store on a fresh table.
func newStore(t *testing.T, client *dynamodb.Client, opts ...func(*Options)) *Store {
	t.Helper()
	s, err := New(client, newTable(t, client, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// warm makes s read its table's description, as its first Acquire does,
// so that a test counts each path's own requests.
func warm(t *testing.T, s *Store) {
	t.Helper()
	if err := s.table.Do(t.Context(), s.checkTable); err != nil {
		t.Fatal(err)
	}
}
