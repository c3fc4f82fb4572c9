package main

// End-to-end tests with the records on Valkey: the payments function,
// built as Lambda runs it, under the Runtime Interface Emulator, with
// IDEMPOTENCY_STORE=redis on the Valkey server of TEST_VALKEY_ADDR, and
// IDEMPOTENCY_STORE=redis-cluster on the three-node cluster of
// TEST_VALKEY_CLUSTER_ADDRS (as the function would reach ElastiCache
// Serverless), both started by scripts/with-servers.sh. The function is
// given no DynamoDB table and a DynamoDB endpoint where nothing listens:
// the records can only be on Valkey. Without the servers the tests skip
// (and fail under CI=true).

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"
	"github.com/gopowertools/lambda/examples/internal/emulator"
	"github.com/gopowertools/lambda/examples/internal/provider"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/redis"
	goredis "github.com/redis/go-redis/v9"
)

// valkeyServer is a server the tests run the function on, and the
// IDEMPOTENCY_STORE that reaches it.
type valkeyServer struct {
	name  string
	env   string // host:port, or host:port,host:port,... for a cluster
	store string
}

var valkeyServers = []valkeyServer{
	{"valkey", "TEST_VALKEY_ADDR", storeRedis},
	{"valkey-cluster", "TEST_VALKEY_CLUSTER_ADDRS", storeRedisCluster},
}

// valkeyE2E is one test's world: a server, a key prefix no other test
// uses, a provider, and the function's environment.
type valkeyE2E struct {
	t           *testing.T
	rie         string
	storeKind   string // IDEMPOTENCY_STORE
	redisURL    string
	keyPrefix   string // POWERTOOLS_IDEMPOTENCY_KEY_PREFIX
	store       *redis.Store
	provider    *provider.Server
	providerURL string
}

func newValkeyE2E(t *testing.T, srv valkeyServer) *valkeyE2E {
	t.Helper()
	rie, err := emulator.LocateRIE(testenv.RepoRoot())
	if err != nil {
		testenv.Unavailable(t, "%v", err)
	}
	v := os.Getenv(srv.env)
	if v == "" {
		testenv.Unavailable(t, "%s is not set: no %s server (scripts/with-servers.sh starts one; docs/testing.md says what to install)", srv.env, srv.name)
	}
	addrs := strings.Split(v, ",")
	x := &valkeyE2E{
		t: t, rie: rie, storeKind: srv.store, provider: provider.New(nil),
		redisURL:  "redis://" + addrs[0],
		keyPrefix: fmt.Sprintf("payments-e2e-%d", time.Now().UnixNano()),
	}
	var client goredis.UniversalClient
	if srv.store == storeRedisCluster {
		client = goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs})
		// Every node to start from, as addr parameters: go-redis's
		// ParseClusterURL reads them.
		if len(addrs) > 1 {
			x.redisURL += "?addr=" + strings.Join(addrs[1:], "&addr=")
		}
	} else {
		client = goredis.NewClient(&goredis.Options{Addr: addrs[0]})
	}
	t.Cleanup(func() { client.Close() })
	if x.store, err = redis.New(client); err != nil {
		t.Fatal(err)
	}
	srvHTTP := httptest.NewServer(x.provider)
	t.Cleanup(srvHTTP.Close)
	x.providerURL = srvHTTP.URL
	bootstrap.Path(t)
	return x
}

// start runs the function under a new emulator, with its records on the
// world's server. env adds to, or overrides, its environment.
func (x *valkeyE2E) start(env ...string) *function {
	x.t.Helper()
	base := []string{
		"AWS_REGION=us-east-1",
		"AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:9", // nothing listens: no DynamoDB
		"AWS_LAMBDA_FUNCTION_NAME=payments",
		"AWS_LAMBDA_FUNCTION_TIMEOUT=10",
		"IDEMPOTENCY_STORE=" + x.storeKind,
		"REDIS_URL=" + x.redisURL,
		"POWERTOOLS_IDEMPOTENCY_KEY_PREFIX=" + x.keyPrefix,
		"PAYMENT_PROVIDER_URL=" + x.providerURL,
		"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH=" + eventKeyPath,
		"POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH=" + validationPath,
	}
	out := &emulator.Buffer{}
	em := emulator.StartTest(x.t, emulator.Config{
		RIE: x.rie, Bootstrap: bootstrap.Path(x.t), Env: append(base, env...), Output: out,
	})
	return &function{em: em, out: out}
}

// record reads, from Valkey, the record that the provider's n-th request
// was made for: its Idempotency-Key is the record's key.
func (x *valkeyE2E) record(n int) *idempotency.Record {
	x.t.Helper()
	return providerRecord(x.t, x.provider, x.store, n, x.keyPrefix)
}

func (x *valkeyE2E) wantRequests(want int) {
	x.t.Helper()
	wantProviderRequests(x.t, x.provider, want)
}

// TestE2EValkey runs the main scenarios of a payment with the records on
// Valkey, standalone and clustered.
func TestE2EValkey(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		name string
		run  func(t *testing.T, x *valkeyE2E)
	}{
		{"FirstChargeThenReplay", valkeyFirstChargeThenReplay},
		{"ConflictingPayment", valkeyConflictingPayment},
		{"InProgress", valkeyInProgress},
	}
	for _, srv := range valkeyServers {
		t.Run(srv.name, func(t *testing.T) {
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) { sc.run(t, newValkeyE2E(t, srv)) })
			}
		})
	}
}

// The first payment charges and is stored COMPLETED, with the record
// expiry's TTL; a retry, from the same sandbox and from a new one, gets
// the first response marked as replayed, and nothing is charged again.
func valkeyFirstChargeThenReplay(t *testing.T, x *valkeyE2E) {
	fn := x.start()
	first := fn.pay(t, order42)
	if first.StatusCode != http.StatusCreated || !strings.Contains(first.Body, `"status":"charged"`) {
		t.Fatalf("first payment: %d %s, want 201 charged", first.StatusCode, first.Body)
	}
	rec := x.record(0)
	if rec.Status != idempotency.StatusComplete || string(rec.Response) == "" {
		t.Errorf("record %s with %d bytes of response, want %s with the response", rec.Status, len(rec.Response), idempotency.StatusComplete)
	}
	// One hour, the default expiry, from the charge; the store keeps the
	// key a minute longer (docs/redis.md).
	if left := time.Until(rec.Expiry); left < 59*time.Minute || left > time.Hour {
		t.Errorf("record expires in %v, want about an hour", left)
	}
	for _, f := range []*function{fn, x.start()} {
		dup := f.pay(t, order42)
		if diff := cmp.Diff(replayOf(first), dup); diff != "" {
			t.Errorf("duplicate differs from the first response marked as replayed (-want +dup):\n%s", diff)
		}
	}
	x.wantRequests(1)
}

// The same order_id with another amount: 422, and no second charge.
func valkeyConflictingPayment(t *testing.T, x *valkeyE2E) {
	fn := x.start()
	if resp := fn.pay(t, order42); resp.StatusCode != http.StatusCreated {
		t.Fatalf("first payment: %d %s", resp.StatusCode, resp.Body)
	}
	resp := fn.pay(t, `{"order_id":"order-42","customer":"cus_1","amount":99900,"currency":"EUR"}`)
	wantProblem(t, resp, http.StatusUnprocessableEntity, "key-reused")
	x.wantRequests(1)
}

// While the provider holds the charge, the record on Valkey is
// IN_PROGRESS with a lease ending at the invocation's deadline, and a
// retry from another sandbox gets 409 with the seconds left of it as
// Retry-After; once the charge is answered, the retry gets the payment.
func valkeyInProgress(t *testing.T, x *valkeyE2E) {
	fn, other := x.start(), x.start()
	release := x.provider.Hold()
	defer release()
	done := make(chan events.APIGatewayV2HTTPResponse, 1)
	go func() {
		resp, err := fn.trySend(order42)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	select {
	case <-x.provider.Arrived():
	case <-time.After(time.Minute):
		t.Fatal("the charge never reached the provider")
	}

	rec := x.record(0)
	if rec.Status != idempotency.StatusInProgress {
		t.Fatalf("record status %s while the charge runs, want %s", rec.Status, idempotency.StatusInProgress)
	}
	deadline := fn.deadline(t, "order-42")
	if !rec.LeaseEnd.Equal(deadline) {
		t.Errorf("lease ends %s, want the invocation deadline %s", rec.LeaseEnd.Format(time.RFC3339Nano), deadline.Format(time.RFC3339Nano))
	}
	before := time.Now()
	dup := other.pay(t, order42)
	after := time.Now()
	wait := wantProblem(t, dup, http.StatusConflict, "in-progress")
	least, most := secondsUntil(deadline, after), secondsUntil(deadline, before)
	if n, err := strconv.Atoi(wait); err != nil || n < least || n > most {
		t.Errorf("Retry-After %q, want %d to %d: the seconds left of the lease ending %s", wait, least, most, deadline.Format(time.RFC3339Nano))
	}

	release()
	first := <-done
	if first.StatusCode != http.StatusCreated {
		t.Fatalf("payment: %d %s, want 201", first.StatusCode, first.Body)
	}
	if diff := cmp.Diff(replayOf(first), other.pay(t, order42)); diff != "" {
		t.Errorf("retry after the charge differs from the payment marked as replayed (-want +retry):\n%s", diff)
	}
	x.wantRequests(1)
	if n := len(x.provider.Charges()); n != 1 {
		t.Errorf("the provider made %d charges, want 1", n)
	}
}
