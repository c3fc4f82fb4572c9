package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/redis/go-redis/v9"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// harness runs the command in-process, against the server at endpoint.
type harness struct {
	endpoint string
	env      map[string]string
	now      func() time.Time
	terminal bool
	stdin    string
	// apiOptions are added to the AWS configuration: hooks into the
	// command's requests.
	apiOptions []func(*middleware.Stack) error
	// redisHooks are added to the command's Redis client.
	redisHooks []redis.Hook
	// scanCount is the COUNT of list's SCANs on Redis; 0 for the default.
	scanCount int
	// prefixScanLimit is the cli's; 0 for the default.
	prefixScanLimit int
	// store, when set, opens the store instead of the server's.
	store func(*storeFlags) (recordStore, error)
}

// result is what one run of the command did.
type result struct {
	status         int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
}

// awsConfig is the configuration of a test client of the server at
// endpoint, with static credentials.
func awsConfig(endpoint string) aws.Config {
	return aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test", Source: "test"}, nil
		}),
	}
}

func (h *harness) run(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	now := h.now
	if now == nil {
		now = time.Now
	}
	c := &cli{
		stdin:    strings.NewReader(h.stdin),
		stdout:   &stdout,
		stderr:   &stderr,
		terminal: h.terminal,
		environ: func() []string {
			var kv []string
			for name, value := range h.env {
				kv = append(kv, name+"="+value)
			}
			return kv
		},
		now: now,
		awsConfig: func(context.Context) (aws.Config, error) {
			cfg := awsConfig(h.endpoint)
			cfg.APIOptions = append(cfg.APIOptions, h.apiOptions...)
			return cfg, nil
		},
		redisClient: func(rawURL string, cluster bool) (redis.UniversalClient, error) {
			client, err := newRedisClient(rawURL, cluster)
			if err != nil {
				return nil, err
			}
			for _, hook := range h.redisHooks {
				client.AddHook(hook)
			}
			return client, nil
		},
		scanCount:       h.scanCount,
		pollEvery:       10 * time.Millisecond,
		prefixScanLimit: cmp.Or(h.prefixScanLimit, prefixScanLimit),
		openStore:       h.store,
	}
	status := c.run(t.Context(), args)
	return result{status: status, stdout: stdout.String(), stderr: stderr.String()}
}

// want fails t unless r ended with status.
func (r result) want(t *testing.T, status int) result {
	t.Helper()
	if r.status != status {
		t.Fatalf("want exit %d, got %v", status, r)
	}
	return r
}

// newTable creates a table with the store's default layout on the server
// at endpoint, without TTL (dynalite has no UpdateTimeToLive), and
// deletes it after the test.
func newTable(t *testing.T, endpoint string) (string, *dynamodb.Client) {
	t.Helper()
	client := testenv.NewDynamoDB(endpoint)
	name := fmt.Sprintf("cmd-%s-%d", strings.NewReplacer("/", "-", "#", "-").Replace(t.Name()), time.Now().UnixNano())
	if len(name) > 200 {
		name = name[len(name)-200:]
	}
	_, err := client.CreateTable(t.Context(), &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatal(err)
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 50 * time.Millisecond })
	if err := waiter.Wait(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(name)}, time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return name, client
}

// writeFile writes content to a file of the test's own, and returns its
// path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var discard = slog.New(slog.DiscardHandler)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func writeTo(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }

func TestHelp(t *testing.T) {
	t.Parallel()
	h := &harness{}
	for _, name := range []string{"inspect", "list", "forget", "resolve", "redrive", "lint"} {
		r := h.run(t, name, "-help").want(t, exitOK)
		if !strings.Contains(r.stderr, "Usage: idempotency "+name) || !strings.Contains(r.stderr, "Flags:") {
			t.Errorf("%s -help wrote:\n%s", name, r.stderr)
		}
	}
	if r := h.run(t, "help").want(t, exitOK); !strings.Contains(r.stdout, "redrive") {
		t.Errorf("help wrote:\n%s", r.stdout)
	}
	h.run(t).want(t, exitUsage)
	h.run(t, "frobnicate").want(t, exitUsage)
	h.run(t, "list", "--no-such-flag").want(t, exitUsage)
	h.run(t, "lint").want(t, exitUsage)
}

func parseJSON(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// nowOrNow returns h's clock, time.Now by default.
func (h *harness) nowOrNow() func() time.Time {
	if h.now != nil {
		return h.now
	}
	return time.Now
}

// countingClient counts the requests it is asked to send, and sends none.
type countingClient struct{ n *int }

func (c countingClient) Do(*http.Request) (*http.Response, error) {
	*c.n++
	return nil, errors.New("no request may be sent")
}
