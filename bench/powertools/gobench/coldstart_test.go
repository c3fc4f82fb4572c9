package main

import (
	"bytes"
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/jmespath"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

// BenchmarkColdStart is what a function's cold start spends on this
// library with every option on, on a canned AWS (cannedAWS) that answers
// on the calling goroutine, so that what is measured is the work of the
// process, not the network's or a server's:
//
//   - step=config: the AWS SDK's configuration alone
//     (config.LoadDefaultConfig), which every Go function on the SDK pays;
//   - step=build: that, the DynamoDB, KMS and S3 clients, the DynamoDB
//     store, the response store with compression, KMS and S3, and the
//     middleware with every option on, which send no request;
//   - step=build+first-call: that and the first invocation, a new key,
//     whose Acquire first checks the stores' configuration: the response
//     store's key and bucket (GenerateDataKey, GetObject), then the
//     table (DescribeTable), requests to the canned AWS.
//
// These run again and again in one process, so they leave out what a
// process does once: package initialization and the caches filled on
// first use (encoding/json's, the SDK's). The steps process=... count it:
// each op starts this test binary afresh, which does nothing
// (process=empty) or build+first-call once (process=build+first-call),
// and ns/op is from its start to its exit, cpu-ns/op its CPU time; the
// difference between the two is the first build and call, once-only work
// included.
//
// requests/op counts the requests each step sends. The target (issue 27)
// is under 10 ms; on Lambda, each request adds its round trip:
//
//	go test -run '^$' -bench ColdStart -benchmem -count 6 ./powertools/gobench
func BenchmarkColdStart(b *testing.B) {
	for _, step := range []string{"empty", "build+first-call"} {
		b.Run("process="+step, func(b *testing.B) {
			cpu := time.Duration(0)
			for b.Loop() {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), coldStartEnv+"="+step)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
	for _, step := range []string{"config", "build", "build+first-call"} {
		b.Run("step="+step, func(b *testing.B) {
			canned := &cannedAWS{}
			payload := newCall("cold-start").payload
			lambdaEnv(b.Setenv, b.TempDir())
			b.ResetTimer()
			cpu0 := cpuTime()
			for b.Loop() {
				if err := coldStart(canned, step, payload); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(canned.requests)/float64(b.N), "requests/op")
		})
	}
}

// coldStartEnv, set to process=...'s step, makes this test binary do that
// step once, before any test, and exit.
const coldStartEnv = "GOBENCH_COLD_START"

func TestMain(m *testing.M) {
	switch step := os.Getenv(coldStartEnv); step {
	case "":
		os.Exit(m.Run())
	case "empty":
		os.Exit(0)
	default:
		dir, err := os.MkdirTemp("", "coldstart")
		if err == nil {
			defer os.RemoveAll(dir)
			lambdaEnv(func(k, v string) { os.Setenv(k, v) }, dir)
			err = coldStart(&cannedAWS{}, step, newCall("cold-start").payload)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// lambdaEnv sets, with setenv, Lambda's environment as the AWS SDK reads
// it: the Region and credentials in variables, no shared files (dir is an
// empty folder), no CA bundle.
func lambdaEnv(setenv func(key, value string), dir string) {
	for _, v := range []string{"AWS_CA_BUNDLE", "AWS_PROFILE", "AWS_ENDPOINT_URL"} {
		setenv(v, "")
	}
	setenv("AWS_CONFIG_FILE", dir+"/none")
	setenv("AWS_SHARED_CREDENTIALS_FILE", dir+"/none")
	setenv("AWS_REGION", "us-east-1")
	setenv("AWS_ACCESS_KEY_ID", "test")
	setenv("AWS_SECRET_ACCESS_KEY", "test")
	setenv("AWS_LAMBDA_FUNCTION_NAME", "bench")
}

// coldStart does step (config, build or build+first-call) on canned.
func coldStart(canned *cannedAWS, step string, payload []byte) error {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(30*time.Second))
	defer cancel()
	cfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(canned))
	if err != nil || step == "config" {
		return err
	}
	h, err := buildEveryOption(ctx, cfg)
	if err != nil || step == "build" {
		return err
	}
	_, err = h.Invoke(ctx, payload)
	return err
}

// buildEveryOption builds, on cfg, a handler with every option of the
// store, the response store and the middleware on.
func buildEveryOption(ctx context.Context, cfg aws.Config) (*idempotency.Handler, error) {
	table, err := dynamo.New(dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String("http://dynamodb.test") }),
		func(o *dynamo.Options) { o.TableName = "bench" })
	if err != nil {
		return nil, err
	}
	store, err := responsestore.New(table,
		responsestore.WithCompression(4096),
		responsestore.WithKMS(kms.NewFromConfig(cfg, func(o *kms.Options) { o.BaseEndpoint = aws.String("http://kms.test") }), "alias/bench"),
		responsestore.WithS3(s3.NewFromConfig(cfg, func(o *s3.Options) {
			o.BaseEndpoint, o.UsePathStyle = aws.String("http://s3.test"), true
		}), "bench"),
		responsestore.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	return idempotency.New(store, handler,
		idempotency.WithEventKey("id"),
		idempotency.WithPayloadValidation("[amount, currency]"),
		idempotency.WithKeyPrefix("bench"),
		idempotency.WithKeyRequired(true),
		idempotency.WithHash(crypto.SHA256),
		idempotency.WithExpiresAfter(time.Hour),
		idempotency.WithLease(time.Minute),
		idempotency.WithAbandonPolicy(idempotency.AbandonUncertain),
		idempotency.WithWaitForInProgress(true),
		idempotency.WithLocalCache(1000),
		idempotency.WithJMESPath(jmespath.WithDecodeLimit(1<<20)),
		idempotency.WithLogger(log),
		idempotency.WithOutcomeLog(true),
		idempotency.WithCloudWatchMetrics(io.Discard, "bench"),
		idempotency.WithObserver(func(context.Context, idempotency.Observation) {}),
		idempotency.WithReconcile(func(context.Context, string) (reply, bool, error) { return reply{}, false, nil }),
	)
}

// cannedAWS is an aws.HTTPClient that answers DynamoDB as cannedDynamoDB
// does, KMS's GenerateDataKey with a data key, and S3's GetObject with
// NoSuchKey, as responsestore's check on the first call expects.
type cannedAWS struct {
	dynamodb cannedDynamoDB
	requests int
}

func (c *cannedAWS) Do(req *http.Request) (*http.Response, error) {
	c.requests++
	target := req.Header.Get("X-Amz-Target")
	switch {
	case strings.HasPrefix(target, "DynamoDB_"):
		return c.dynamodb.Do(req)
	case target == "TrentService.GenerateDataKey":
		key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
		body, _ := json.Marshal(map[string]string{"KeyId": "arn:aws:kms:us-east-1:000000000000:key/bench", "Plaintext": key, "CiphertextBlob": key})
		return cannedReply(req, http.StatusOK, "application/x-amz-json-1.1", body), nil
	case target == "" && req.Method == http.MethodGet && req.URL.Host == "s3.test":
		return cannedReply(req, http.StatusNotFound, "application/xml",
			[]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>`)), nil
	}
	return nil, fmt.Errorf("cannedAWS: unexpected request %s %s %q", req.Method, req.URL, target)
}

func cannedReply(req *http.Request, status int, contentType string, body []byte) *http.Response {
	h := http.Header{}
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return &http.Response{
		StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req,
	}
}
