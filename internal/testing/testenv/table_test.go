package testenv_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// servers lists the DynamoDB-compatible servers these tests probe.
var servers = []struct {
	name string
	env  string
}{
	{"moto", testenv.MotoEnv},
	{"dynalite", testenv.DynaliteEnv},
}

// rawClient returns a client for the server in env with the SDK's retries
// off, so that each call is exactly one request and the server's own answer
// is what the test sees. Each request gets a new connection: without retries,
// a pooled connection that the server closed for idleness (dynalite, like any
// Node.js server, does so after 5 s) would fail the request before it is sent.
func rawClient(t *testing.T, env string) *dynamodb.Client {
	t.Helper()
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.DisableKeepAlives = true
	})
	return testenv.DynamoDB(t, env, func(o *dynamodb.Options) {
		o.RetryMaxAttempts = 1
		o.HTTPClient = httpClient
	})
}

var tableSeq atomic.Int64

// newTable creates an on-demand table keyed by the string attribute "id",
// waits until it is ACTIVE (dynalite keeps it CREATING for a while), and
// deletes it when the test ends. Names are unique: a server keeps its tables
// for the whole `make test` run.
func newTable(t *testing.T, client *dynamodb.Client) string {
	t.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("testenv-%d-%d", time.Now().UnixNano(), tableSeq.Add(1))
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatalf("CreateTable %s: %v", name, err)
	}
	t.Cleanup(func() {
		if _, err := client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
			t.Errorf("DeleteTable %s: %v", name, err)
		}
	})
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 20 * time.Millisecond
		o.MaxDelay = 200 * time.Millisecond
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 30*time.Second); err != nil {
		t.Fatalf("table %s never became ACTIVE: %v", name, err)
	}
	return name
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
