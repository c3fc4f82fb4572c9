package responsestore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// moto serves S3, KMS and DynamoDB on one port (scripts/with-servers.sh
// starts it and sets TEST_MOTO_ENDPOINT); these helpers make clients for
// it, or for a fault proxy in front of it, and fresh resources per test.

var testCredentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test", Source: "responsestore tests"}, nil
})

// fastRetryer is the SDK's standard retryer, three attempts and the default
// retryable errors, with its backoff cut to a millisecond.
func fastRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
	})
}

func newS3(url string, c *counter, optFns ...func(*s3.Options)) *s3.Client {
	return s3.New(s3.Options{
		Region: "us-east-1", Credentials: testCredentials, BaseEndpoint: aws.String(url),
		UsePathStyle: true, Retryer: fastRetryer(), APIOptions: c.apiOptions(),
	}, optFns...)
}

func newKMS(url string, c *counter) *kms.Client {
	return kms.New(kms.Options{
		Region: "us-east-1", Credentials: testCredentials, BaseEndpoint: aws.String(url),
		Retryer: fastRetryer(), APIOptions: c.apiOptions(),
	})
}

// counter counts the requests of the clients it is installed in, by
// operation, each attempt of a retried request once.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) apiOptions() []func(*middleware.Stack) error {
	if c == nil {
		return nil
	}
	return []func(*middleware.Stack) error{func(stack *middleware.Stack) error {
		return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("countRequests",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				c.mu.Lock()
				if c.n == nil {
					c.n = map[string]int{}
				}
				c.n[awsmiddleware.GetOperationName(ctx)]++
				c.mu.Unlock()
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
	}}
}

// take returns the counts since the last take.
func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = nil
	if n == nil {
		n = map[string]int{}
	}
	return n
}

// resourceName is a name unique to the test, as S3 and DynamoDB accept
// it: lower case letters, digits and hyphens, at most 63 characters.
func resourceName(t *testing.T) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, t.Name())
	suffix := fmt.Sprintf("-%d", time.Now().UnixNano())
	if len(name) > 63-len(suffix) {
		name = name[len(name)-(63-len(suffix)):]
	}
	return strings.Trim(name, "-") + suffix
}

// moto is one test's resources on moto: a bucket, a KMS key, a DynamoDB
// table, and clients with request counters.
type moto struct {
	url    string
	s3     *s3.Client
	kms    *kms.Client
	ddb    *dynamodb.Client
	bucket string
	keyID  string
	table  string
	s3n    counter
	kmsn   counter
}

func newMoto(t *testing.T) *moto {
	t.Helper()
	m := &moto{url: testenv.Endpoint(t, testenv.MotoEnv)}
	m.s3 = newS3(m.url, &m.s3n)
	m.kms = newKMS(m.url, &m.kmsn)
	m.ddb = testenv.NewDynamoDB(m.url)
	ctx := t.Context()
	m.bucket = resourceName(t)
	if _, err := m.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(m.bucket)}); err != nil {
		t.Fatal(err)
	}
	key, err := m.kms.CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String(t.Name())})
	if err != nil {
		t.Fatal(err)
	}
	m.keyID = aws.ToString(key.KeyMetadata.KeyId)
	m.table = resourceName(t)
	if err := dynamo.CreateTable(ctx, m.ddb, func(o *dynamo.Options) { o.TableName = m.table }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := m.ddb.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(m.table)}); err != nil {
			t.Logf("delete table %s: %v", m.table, err)
		}
	})
	m.s3n.take()
	m.kmsn.take()
	return m
}

// dynamoStore returns a DynamoDB store on the test's table.
func (m *moto) dynamoStore(t *testing.T, client dynamo.Client) *dynamo.Store {
	t.Helper()
	if client == nil {
		client = m.ddb
	}
	s, err := dynamo.New(client, func(o *dynamo.Options) { o.TableName = m.table })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// items counts the items of the test's table.
func (m *moto) items(t *testing.T) int32 {
	t.Helper()
	out, err := m.ddb.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(m.table), Select: ddbtypes.SelectCount})
	if err != nil {
		t.Fatal(err)
	}
	return out.Count
}

// objects lists the keys of the test's bucket.
func (m *moto) objects(t *testing.T) []string {
	t.Helper()
	out, err := m.s3.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(m.bucket)})
	if err != nil {
		t.Fatal(err)
	}
	m.s3n.take()
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}
