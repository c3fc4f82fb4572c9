package dynamo

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/internal/testing/faultworld"
	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// The middleware on the DynamoDB store, through internal/testing/faultproxy, with
// the SDK's standard retryer: each fault the network or DynamoDB can
// produce, on each request the middleware sends, must leave every effect
// run once. internal/testing/faultworld holds the world and the tests; what is
// DynamoDB's is here.

// The requests the middleware sends, told apart by operation and body.
var (
	acquirePut  = faultproxy.Rule{Op: "PutItem", BodyContains: "attribute_not_exists(#id) OR #expiry"}
	completePut = faultproxy.Rule{Op: "PutItem", BodyContains: `"ConditionExpression":"#token = :token"`}
	releaseDel  = faultproxy.Rule{Op: "DeleteItem"}
	getItemReq  = faultproxy.Rule{Op: "GetItem"}
)

// faultWorld is a fault world on a fresh table, reached through one proxy.
type faultWorld struct {
	*faultworld.World
	proxy *faultproxy.Proxy
	store *Store
}

// faultRetryer is the SDK's standard retryer, as it is by default (three
// attempts, the default retryable errors and retry quota), with its
// backoff cut from up to seconds to a millisecond so that the tests run
// fast. maxAttempts 0 keeps the default.
func faultRetryer(maxAttempts int) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			if maxAttempts > 0 {
				so.MaxAttempts = maxAttempts
			}
			so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
		})
	}
}

func newFaultWorld(t *testing.T, srv server, proxyOpts ...faultproxy.Option) *faultWorld {
	t.Helper()
	direct := srv.client(t)
	p, err := faultproxy.NewHTTP(testenv.Endpoint(t, srv.env), proxyOpts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	opts := newTable(t, direct)
	store, err := New(testenv.NewDynamoDB(p.URL(), faultRetryer(0)), opts...)
	if err != nil {
		t.Fatal(err)
	}
	// The checks read through the proxy, between faults.
	return &faultWorld{World: faultworld.New(t, store, store, p), proxy: p, store: store}
}
