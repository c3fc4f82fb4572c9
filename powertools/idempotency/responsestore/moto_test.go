package responsestore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

// allOn is every option, on moto's S3 and KMS: gzip from 1 KiB, KMS, and
// offloading over threshold.
func (m *moto) allOn(threshold int) []responsestore.Option {
	return []responsestore.Option{
		responsestore.WithCompression(1024),
		responsestore.WithKMS(m.kms, m.keyID), responsestore.WithFunctionName("orders"),
		responsestore.WithS3(m.s3, m.bucket), responsestore.WithOffloadThreshold(threshold),
	}
}

// The conformance suite, UNCERTAIN cases included, over the wrapped
// DynamoDB store and the wrapped in-memory store, with moto's S3 and KMS,
// every response offloaded and encrypted.
func TestConformanceMoto(t *testing.T) {
	t.Parallel()
	m := newMoto(t)
	t.Run("dynamo", func(t *testing.T) {
		inner := m.dynamoStore(t, nil)
		idempotencytest.TestStore(t, func(t *testing.T) idempotency.Store { return mustNew(t, inner, m.allOn(0)...) })
	})
	t.Run("memory", func(t *testing.T) {
		idempotencytest.TestStore(t, func(t *testing.T) idempotency.Store {
			return mustNew(t, idempotencytest.NewStore(), m.allOn(0)...)
		})
	})
}

// report is a handler's large response.
type report struct {
	ID   string   `json:"id"`
	Rows []string `json:"rows"`
}

// bigReport returns a report of about n bytes of JSON that gzip cannot
// shrink much: hex digests.
func bigReport(id string, n int) report {
	r := report{ID: id}
	for i := 0; 67*i < n; i++ {
		sum := sha256.Sum256(fmt.Appendf(nil, "%s-%d", id, i))
		r.Rows = append(r.Rows, hex.EncodeToString(sum[:]))
	}
	return r
}

// A 5 MB response through idempotency.Wrap over the DynamoDB store on
// moto, compressed, encrypted with KMS and offloaded to S3, is replayed
// byte for byte, and the handler runs once.
func TestFiveMegabyteResponse(t *testing.T) {
	t.Parallel()
	m := newMoto(t)
	store := mustNew(t, m.dynamoStore(t, nil), m.allOn(responsestore.DefaultOffloadThreshold)...)
	if s3, kms := m.s3n.take(), m.kmsn.take(); len(s3)+len(kms) > 0 {
		t.Errorf("New sent S3 %v and KMS %v, want nothing", s3, kms)
	}
	var runs atomic.Int32
	h := idempotency.Wrap(store, func(ctx context.Context, in struct{ ID string }) (report, error) {
		runs.Add(1)
		return bigReport(in.ID, 5<<20), nil
	}, idempotency.WithEventKey("ID"), idempotency.WithKeyPrefix("orders"))
	event := []byte(`{"ID":"r-1"}`)
	first, err := h.Invoke(t.Context(), event)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) < 5<<20 {
		t.Fatalf("response of %d bytes, want 5 MB", len(first))
	}
	// The store's check of the bucket, a read, and of the key, with the
	// data key that the response then uses; and the object.
	if got, want := m.s3n.take(), map[string]int{"GetObject": 1, "PutObject": 1}; !maps.Equal(got, want) {
		t.Errorf("first call sent S3 %v, want %v", got, want)
	}
	if got, want := m.kmsn.take(), map[string]int{"GenerateDataKey": 1}; !maps.Equal(got, want) {
		t.Errorf("first call sent KMS %v, want %v: one data key, the check's", got, want)
	}
	// Another process: a new store, with no data key cached but its
	// check's.
	other := mustNew(t, m.dynamoStore(t, nil), m.allOn(responsestore.DefaultOffloadThreshold)...)
	m.s3n.take()
	m.kmsn.take()
	h2 := idempotency.Wrap(other,
		func(context.Context, struct{ ID string }) (report, error) { runs.Add(1); return report{}, nil },
		idempotency.WithEventKey("ID"), idempotency.WithKeyPrefix("orders"))
	again, err := h2.Invoke(t.Context(), event)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, first) {
		t.Fatalf("replayed %d bytes, not the %d of the first call", len(again), len(first))
	}
	if runs.Load() != 1 {
		t.Fatalf("handler ran %d times, want 1", runs.Load())
	}
	// Its first invocation, a replay, runs its check too.
	if got, want := m.s3n.take(), map[string]int{"GetObject": 2}; !maps.Equal(got, want) {
		t.Errorf("replay sent S3 %v, want %v", got, want)
	}
	if got, want := m.kmsn.take(), map[string]int{"GenerateDataKey": 1, "Decrypt": 1}; !maps.Equal(got, want) {
		t.Errorf("replay sent KMS %v, want %v", got, want)
	}
	// The item holds the envelope, not the response.
	item, err := m.ddb.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(m.table), Key: map[string]ddbtypes.AttributeValue{
		"id": &ddbtypes.AttributeValueMemberS{Value: onlyKey(t, m)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	data, ok := item.Item["data"].(*ddbtypes.AttributeValueMemberB)
	if !ok || len(data.Value) > 1024 {
		t.Fatalf("data attribute %T of %d bytes, want a small binary envelope", item.Item["data"], len(data.Value))
	}
}

// onlyKey returns the key of the one record in the test's table.
func onlyKey(t *testing.T, m *moto) string {
	t.Helper()
	out, err := m.ddb.Scan(t.Context(), &dynamodb.ScanInput{TableName: aws.String(m.table)})
	if err != nil || len(out.Items) != 1 {
		t.Fatalf("scan: %d items, %v; want 1", len(out.Items), err)
	}
	return out.Items[0]["id"].(*ddbtypes.AttributeValueMemberS).Value
}

// On moto's KMS: an encrypted record copied to another key does not
// decrypt (CorruptedRecordError), and a store with another KMS key cannot
// read it; neither runs the handler.
func TestKMSBinding(t *testing.T) {
	t.Parallel()
	m := newMoto(t)
	inner := m.dynamoStore(t, nil)
	opts := []responsestore.Option{responsestore.WithKMS(m.kms, m.keyID), responsestore.WithFunctionName("orders")}
	s := mustNew(t, inner, opts...)
	completeOne(t, s, "orders#a", []byte(`{"card":"4111"}`))
	rec, err := inner.Get(t.Context(), "orders#a")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(rec.Response, []byte("4111")) {
		t.Fatal("the table holds the response in the clear")
	}

	moved := *rec
	moved.Key = "orders#b"
	if existing, err := inner.Acquire(t.Context(), &moved, time.Now()); err != nil || existing != nil {
		t.Fatal(existing, err)
	}
	_, err = s.Get(t.Context(), "orders#b")
	wantCorrupted(t, "Get of the moved record", err, true)

	other, err := m.kms.CreateKey(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	otherKey := mustNew(t, inner, responsestore.WithKMS(m.kms, aws.ToString(other.KeyMetadata.KeyId)), responsestore.WithFunctionName("orders"))
	_, err = otherKey.Get(t.Context(), "orders#a")
	t.Logf("read with another KMS key: %v", err)
	// KMS answers IncorrectKeyException, a corrupted record here; moto
	// answers AccessDeniedException, which is a failure that may pass
	// (a key policy can be fixed). Either way nothing is decrypted.
	if err == nil {
		t.Fatal("a store with another KMS key read the response")
	}

	otherFunction := mustNew(t, inner, responsestore.WithKMS(m.kms, m.keyID), responsestore.WithFunctionName("payments"))
	_, err = otherFunction.Get(t.Context(), "orders#a")
	wantCorrupted(t, "Get by another function", err, true)

	// Through the middleware, the duplicate of the moved record gets the
	// error and the handler does not run.
	runs := 0
	h := idempotency.Wrap(s, func(context.Context, string) (string, error) { runs++; return "ran", nil },
		idempotency.WithKeyPrefix("orders"))
	if _, err := h.Invoke(t.Context(), []byte(`"x"`)); err != nil {
		t.Fatal(err)
	}
	key, _, _ := h.KeyOf([]byte(`"x"`))
	planted := *rec
	planted.Key = key
	if err := inner.Release(t.Context(), key, mustGet(t, inner, key).LeaseToken); err != nil {
		t.Fatal(err)
	}
	if _, err := inner.Acquire(t.Context(), &planted, time.Now()); err != nil {
		t.Fatal(err)
	}
	out, err := h.Invoke(t.Context(), []byte(`"x"`))
	if _, ok := errors.AsType[*idempotency.CorruptedRecordError](err); !ok || runs != 1 {
		t.Fatalf("duplicate of a planted record = %q, %v, handler runs %d; want a CorruptedRecordError and 1 run", out, err, runs)
	}
}

func mustGet(t *testing.T, s idempotency.Store, key string) *idempotency.Record {
	t.Helper()
	rec, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// The writes a handler stages with dynamo.Stage are committed with the
// record through the wrapper, which keeps the DynamoDB store's Invoker.
func TestStagedWritesThroughWrapper(t *testing.T) {
	t.Parallel()
	m := newMoto(t)
	ledger := resourceName(t)
	if err := dynamo.CreateTable(t.Context(), m.ddb, func(o *dynamo.Options) { o.TableName = ledger }); err != nil {
		t.Fatal(err)
	}
	store := mustNew(t, m.dynamoStore(t, nil), m.allOn(0)...)
	h := idempotency.Wrap(store, func(ctx context.Context, in struct{ ID string }) (string, error) {
		err := dynamo.Stage(ctx, ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{
			TableName: aws.String(ledger),
			Item:      map[string]ddbtypes.AttributeValue{"id": &ddbtypes.AttributeValueMemberS{Value: in.ID}},
		}})
		return "moved " + in.ID, err
	}, idempotency.WithEventKey("ID"), idempotency.WithKeyPrefix("transfers"))
	if out, err := h.Invoke(t.Context(), []byte(`{"ID":"t-1"}`)); err != nil || string(out) != `"moved t-1"` {
		t.Fatalf("Invoke = %q, %v", out, err)
	}
	item, err := m.ddb.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(ledger), Key: map[string]ddbtypes.AttributeValue{
		"id": &ddbtypes.AttributeValueMemberS{Value: "t-1"},
	}})
	if err != nil || len(item.Item) == 0 {
		t.Fatalf("the staged write was not committed: %v, %v", item, err)
	}
	if out, err := h.Invoke(t.Context(), []byte(`{"ID":"t-1"}`)); err != nil || string(out) != `"moved t-1"` {
		t.Fatalf("replay = %q, %v", out, err)
	}
}

// The bucket's lifecycle rule of docs/large-and-sensitive-responses.md,
// as the API takes it.
func TestLifecycleRule(t *testing.T) {
	t.Parallel()
	m := newMoto(t)
	_, err := m.s3.PutBucketLifecycleConfiguration(t.Context(), &s3.PutBucketLifecycleConfigurationInput{
		Bucket: aws.String(m.bucket),
		LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: []s3types.LifecycleRule{{
			ID:         aws.String("expire-idempotency-responses"),
			Status:     s3types.ExpirationStatusEnabled,
			Filter:     &s3types.LifecycleRuleFilter{Prefix: aws.String(responsestore.DefaultObjectPrefix)},
			Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(2)},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.s3.GetBucketLifecycleConfiguration(t.Context(), &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(m.bucket)})
	if err != nil || len(out.Rules) != 1 || aws.ToInt32(out.Rules[0].Expiration.Days) != 2 {
		t.Fatalf("lifecycle = %+v, %v", out, err)
	}
}
