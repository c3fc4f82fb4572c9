package main

// End-to-end tests of large and sensitive responses
// (docs/large-and-sensitive-responses.md): the payments function with
// IDEMPOTENCY_RESPONSES_KEY, _BUCKET and _GZIP_MIN, on moto's KMS and S3
// (a key and a bucket each test makes), through proxies that count the
// requests and can break them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"

	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

// responses is where a test's function keeps its responses: a bucket and
// a KMS key on moto, the key named by an alias as template.yaml names it,
// and a proxy in front of each service.
type responses struct {
	t      *testing.T
	s3     *s3.Client // the test's own, straight to moto
	kms    *kms.Client
	bucket string
	alias  string
	// S3 and KMS as the function reaches them. The proxy names a KMS
	// request by its operation ("GenerateDataKey", "Decrypt") and an S3
	// request by none: S3 sends no X-Amz-Target.
	s3Proxy, kmsProxy *faultproxy.Proxy
}

func newResponses(t *testing.T, moto string) *responses {
	t.Helper()
	creds := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}, nil
	})
	r := &responses{
		t:      t,
		s3:     s3.New(s3.Options{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(moto), UsePathStyle: true}),
		kms:    kms.New(kms.Options{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(moto)}),
		bucket: fmt.Sprintf("payments-e2e-%d", time.Now().UnixNano()),
	}
	r.alias = "alias/" + r.bucket
	ctx := context.Background()
	if _, err := r.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(r.bucket)}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	key, err := r.kms.CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String(t.Name())})
	if err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	if _, err := r.kms.CreateAlias(ctx, &kms.CreateAliasInput{AliasName: aws.String(r.alias), TargetKeyId: key.KeyMetadata.KeyId}); err != nil {
		t.Fatalf("CreateAlias: %v", err)
	}
	r.s3Proxy, r.kmsProxy = newProxy(t, moto), newProxy(t, moto)
	return r
}

func newProxy(t *testing.T, target string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.NewHTTP(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// env is what the function needs to encrypt its responses and offload the
// large ones, on top of its usual environment.
func (r *responses) env(more ...string) []string {
	return append([]string{
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
		"AWS_ENDPOINT_URL_S3=" + r.s3Proxy.URL(),
		"AWS_ENDPOINT_URL_KMS=" + r.kmsProxy.URL(),
		"IDEMPOTENCY_RESPONSES_KEY=" + r.alias,
		"IDEMPOTENCY_RESPONSES_BUCKET=" + r.bucket,
	}, more...)
}

// requestCounts are S3 and KMS requests, by operation, retries included.
type requestCounts struct{ S3, GenerateDataKey, Decrypt int }

// requests returns the requests the function sent since the last call.
func (r *responses) requests() requestCounts {
	s3n, kmsn := r.s3Proxy.Counts(), r.kmsProxy.Counts()
	r.s3Proxy.ResetCounts()
	r.kmsProxy.ResetCounts()
	return requestCounts{S3: s3n.Total(), GenerateDataKey: kmsn.Requests["GenerateDataKey"], Decrypt: kmsn.Requests["Decrypt"]}
}

// objects returns the bucket's objects, by key, with their bodies.
func (r *responses) objects() map[string][]byte {
	r.t.Helper()
	ctx := context.Background()
	list, err := r.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(r.bucket)})
	if err != nil {
		r.t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, o := range list.Contents {
		obj, err := r.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(r.bucket), Key: o.Key})
		if err != nil {
			r.t.Fatal(err)
		}
		body, err := io.ReadAll(obj.Body)
		obj.Body.Close()
		if err != nil {
			r.t.Fatal(err)
		}
		out[aws.ToString(o.Key)] = body
	}
	return out
}

// open reads the record of key as the function does: its envelope undone
// with the function's name, the key and the bucket.
func (r *responses) open(inner idempotency.Store, key string) *idempotency.Record {
	r.t.Helper()
	store, err := responsestore.New(inner,
		responsestore.WithKMS(r.kms, r.alias), responsestore.WithFunctionName("payments"),
		responsestore.WithS3(r.s3, r.bucket))
	if err != nil {
		r.t.Fatal(err)
	}
	rec, err := store.Get(context.Background(), key)
	if err != nil {
		r.t.Fatalf("Get(%s) through responsestore: %v", key, err)
	}
	return rec
}

// The envelope's magic and flags (docs/large-and-sensitive-responses.md,
// "What is stored").
var envelopeMagic = []byte{0x89, 'I', 'D', 'R'}

const (
	flagGzip byte = 0x01
	flagKMS  byte = 0x02
	flagS3   byte = 0x08
)

// wantEnvelope checks that a stored response is an envelope with flags,
// and holds none of the response's text.
func wantEnvelope(t *testing.T, stored []byte, flags byte, plain string) {
	t.Helper()
	if len(stored) < 6 || !bytes.Equal(stored[:4], envelopeMagic) || stored[5] != flags {
		t.Fatalf("stored response starts %q, want an envelope with flags %#x", stored[:min(len(stored), 16)], flags)
	}
	if bytes.Contains(stored, []byte(plain)) {
		t.Errorf("the stored response holds %q in the clear", plain)
	}
}

// bigOrder is a payment of orderID whose lines make a body of at least n
// bytes: a wholesale order of catalogue items.
func bigOrder(orderID string, n int) string {
	names := []string{"Stainless steel water bottle, 750 ml", "Replacement filter cartridge, pack of 3",
		"Notebook, A5, dotted, 120 pages", "USB-C cable, braided, 2 m", "Green tea, loose leaf, 100 g"}
	p := Payment{OrderID: orderID, Customer: "cus_1", Currency: "EUR"}
	for size := 0; size < n; {
		i := len(p.Items)
		it := Item{SKU: fmt.Sprintf("SKU-%07d", i*7919%10000000), Name: names[i%len(names)], Quantity: int64(1 + i%3), UnitAmount: int64(100 + i*37%9900)}
		p.Items = append(p.Items, it)
		p.Amount += it.Quantity * it.UnitAmount
		line, _ := json.Marshal(it)
		size += len(line) + 1
	}
	body, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return string(body)
}

// sameResponse fails t unless got is want marked as replayed, its body
// byte for byte; a diff of megabytes is not printed.
func sameResponse(t *testing.T, want, got events.APIGatewayV2HTTPResponse) {
	t.Helper()
	if got.Body != want.Body {
		t.Errorf("replayed body of %d bytes differs from the first's %d bytes", len(got.Body), len(want.Body))
	}
	want.Body, got.Body = "", ""
	if diff := cmp.Diff(replayOf(want), got); diff != "" {
		t.Errorf("replay differs from the first response marked as replayed, body aside (-want +got):\n%s", diff)
	}
}

// A 5 MiB response, encrypted with KMS and offloaded to S3, is replayed
// byte for byte by a new sandbox, with one S3 GetObject and one KMS
// Decrypt; the record holds a small envelope, the bucket one object, and
// neither any of the response in the clear. Lambda's payloads are at most
// 6 MB each way, which the emulator enforces too: the event and the
// response carry the 5 MiB body JSON-escaped, some 5.9 MB.
func TestE2EFiveMegabyteResponse(t *testing.T) {
	t.Parallel()
	x := newE2E(t)
	r := newResponses(t, x.moto)
	order := bigOrder("order-5mb", 5<<20)
	start := time.Now()
	first := x.start(r.env()...).pay(t, order)
	took := time.Since(start)
	if first.StatusCode != http.StatusCreated || len(first.Body) < 5<<20 {
		t.Fatalf("first payment: %d, %d bytes of body; want 201 and at least 5 MiB", first.StatusCode, len(first.Body))
	}
	// The cold start's checks (responsestore.New) are one S3 GetObject,
	// and the GenerateDataKey whose data key the response then uses.
	if got, want := r.requests(), (requestCounts{S3: 2, GenerateDataKey: 1}); got != want {
		t.Errorf("first payment: requests %+v, want %+v", got, want)
	}
	rec := x.record(0)
	if rec.Status != idempotency.StatusComplete || len(rec.Response) > 1024 {
		t.Errorf("record %s with %d bytes of response, want %s with an envelope of a few hundred bytes", rec.Status, len(rec.Response), idempotency.StatusComplete)
	}
	wantEnvelope(t, rec.Response, flagKMS|flagS3, "SKU-")
	objects := r.objects()
	if len(objects) != 1 {
		t.Fatalf("the bucket holds %d objects, want 1", len(objects))
	}
	for key, body := range objects {
		if !strings.HasPrefix(key, responsestore.DefaultObjectPrefix) || bytes.Contains(body, []byte("SKU-")) {
			t.Errorf("object %s of %d bytes: want it under %s and encrypted", key, len(body), responsestore.DefaultObjectPrefix)
		}
		t.Logf("body %d bytes; record's envelope %d bytes; object %d bytes; first payment %v",
			len(first.Body), len(rec.Response), len(body), took.Round(time.Millisecond))
	}

	start = time.Now()
	dup := x.start(r.env()...).pay(t, order)
	t.Logf("replay from a new sandbox %v", time.Since(start).Round(time.Millisecond))
	sameResponse(t, first, dup)
	if got, want := r.requests(), (requestCounts{S3: 1 + 1, GenerateDataKey: 1, Decrypt: 1}); got != want {
		t.Errorf("replay: requests %+v, want %+v (with the cold start's checks)", got, want)
	}
	x.wantRequests(1)
}

// Compressed then encrypted, a 1 MiB receipt fits in the record: no
// object, and the replay from a new sandbox is byte for byte the first.
func TestE2ECompressedEncryptedResponse(t *testing.T) {
	t.Parallel()
	x := newE2E(t)
	r := newResponses(t, x.moto)
	order := bigOrder("order-1mb", 1<<20)
	env := r.env("IDEMPOTENCY_RESPONSES_GZIP_MIN=4096")
	first := x.start(env...).pay(t, order)
	if first.StatusCode != http.StatusCreated {
		t.Fatalf("first payment: %d %.200s", first.StatusCode, first.Body)
	}
	rec := x.record(0)
	wantEnvelope(t, rec.Response, flagGzip|flagKMS, "SKU-")
	if n := len(r.objects()); n != 0 {
		t.Errorf("the bucket holds %d objects, want none", n)
	}
	t.Logf("body %d bytes, stored %d bytes", len(first.Body), len(rec.Response))
	sameResponse(t, first, x.start(env...).pay(t, order))
	x.wantRequests(1)
}

// Without the bucket, the same order's receipt is too large for a
// DynamoDB item: the record is completed without it, and the retry gets
// 409 response-not-stored, not a second charge.
func TestE2ELargeResponseWithoutBucket(t *testing.T) {
	t.Parallel()
	x := newE2E(t)
	order := bigOrder("order-1mb", 1<<20)
	fn := x.start()
	if first := fn.pay(t, order); first.StatusCode != http.StatusCreated {
		t.Fatalf("first payment: %d %.200s", first.StatusCode, first.Body)
	}
	wantProblem(t, fn.pay(t, order), http.StatusConflict, "response-not-stored")
	x.wantRequests(1)
}

// The records on Valkey: the same envelope, the same object, the same
// replay from a new sandbox.
func TestE2EValkeyOffloadedResponse(t *testing.T) {
	t.Parallel()
	x := newValkeyE2E(t, valkeyServers[0])
	r := newResponses(t, testenv.Endpoint(t, testenv.MotoEnv))
	order := bigOrder("order-1mb", 1<<20)
	first := x.start(r.env()...).pay(t, order)
	if first.StatusCode != http.StatusCreated {
		t.Fatalf("first payment: %d %.200s", first.StatusCode, first.Body)
	}
	rec := x.record(0)
	wantEnvelope(t, rec.Response, flagKMS|flagS3, "SKU-")
	if n := len(r.objects()); n != 1 {
		t.Errorf("the bucket holds %d objects, want 1", n)
	}
	r.requests()
	sameResponse(t, first, x.start(r.env()...).pay(t, order))
	if got, want := r.requests(), (requestCounts{S3: 1 + 1, GenerateDataKey: 1, Decrypt: 1}); got != want {
		t.Errorf("replay: requests %+v, want %+v (with the cold start's checks)", got, want)
	}
	x.wantRequests(1)
}
