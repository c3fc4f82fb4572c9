package main

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
	"github.com/gopowertools/lambda/redis"
)

// TestStoreFromEnv checks which store each IDEMPOTENCY_STORE makes, and
// that each refuses to start without its own variable. The Redis store
// asks its server, on the first invocation, whether it is a cluster node:
// its cases run on the test servers ({valkey}, {cluster} in REDIS_URL).
func TestStoreFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want idempotency.Store // its type; nil: an error
		// wantErr is in the error's message when want is nil.
		wantErr string
		// firstErr is in the message of the *ConfigError of the first
		// invocation's Acquire; "": not tried.
		firstErr string
	}{
		{"default is DynamoDB", map[string]string{"POWERTOOLS_IDEMPOTENCY_TABLE": "t"}, (*dynamo.Store)(nil), "", ""},
		{"dynamodb", map[string]string{"IDEMPOTENCY_STORE": "dynamodb", "POWERTOOLS_IDEMPOTENCY_TABLE": "t"}, (*dynamo.Store)(nil), "", ""},
		{"dynamodb without a table", map[string]string{"IDEMPOTENCY_STORE": "dynamodb"}, nil, "POWERTOOLS_IDEMPOTENCY_TABLE", ""},
		{"REDIS_URL alone chooses nothing", map[string]string{"REDIS_URL": "redis://127.0.0.1:6379"}, nil, "POWERTOOLS_IDEMPOTENCY_TABLE", ""},
		{"redis", map[string]string{"IDEMPOTENCY_STORE": "redis", "REDIS_URL": "redis://{valkey}/2"}, (*redis.Store)(nil), "", ""},
		{"redis on a cluster", map[string]string{"IDEMPOTENCY_STORE": "redis", "REDIS_URL": "redis://{cluster}"}, (*redis.Store)(nil), "", "ClusterClientFromEnv"},
		{"redis without REDIS_URL", map[string]string{"IDEMPOTENCY_STORE": "redis", "POWERTOOLS_IDEMPOTENCY_TABLE": "t"}, nil, "REDIS_URL", ""},
		{"redis-cluster", map[string]string{"IDEMPOTENCY_STORE": "redis-cluster", "REDIS_URL": "redis://{cluster}"}, (*redis.Store)(nil), "", ""},
		{"redis-cluster with a bad URL", map[string]string{"IDEMPOTENCY_STORE": "redis-cluster", "REDIS_URL": "http://secret@127.0.0.1"}, nil, "REDIS_URL", ""},
		{"unknown", map[string]string{"IDEMPOTENCY_STORE": "memcached"}, nil, `IDEMPOTENCY_STORE="memcached"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, name := range []string{"IDEMPOTENCY_STORE", "POWERTOOLS_IDEMPOTENCY_TABLE", "REDIS_URL"} {
				t.Setenv(name, tt.env[name])
			}
			if u := tt.env["REDIS_URL"]; strings.Contains(u, "{valkey}") {
				t.Setenv("REDIS_URL", strings.ReplaceAll(u, "{valkey}", testenv.Endpoint(t, "TEST_VALKEY_ADDR")))
			} else if strings.Contains(u, "{cluster}") {
				node, _, _ := strings.Cut(testenv.Endpoint(t, "TEST_VALKEY_CLUSTER_ADDRS"), ",")
				t.Setenv("REDIS_URL", strings.ReplaceAll(u, "{cluster}", node))
			}
			t.Setenv("AWS_REGION", "us-east-1")
			store, err := storeFromEnv(context.Background())
			if tt.want == nil {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("storeFromEnv() = %T, %v; want an error naming %s", store, err, tt.wantErr)
				}
				if store != nil {
					t.Errorf("storeFromEnv() returned a store, %#v, with its error", store)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("the error %q repeats the URL's password", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("storeFromEnv(): %v", err)
			}
			if reflect.TypeOf(store) != reflect.TypeOf(tt.want) {
				t.Errorf("storeFromEnv() = %T, want %T", store, tt.want)
			}
			if tt.firstErr != "" {
				err := firstAcquire(store)
				if _, ok := err.(*idempotency.ConfigError); !ok || !strings.Contains(err.Error(), tt.firstErr) {
					t.Errorf("the first Acquire: %v, want a *idempotency.ConfigError naming %s", err, tt.firstErr)
				}
			}
		})
	}
}

// A missing REDIS_URL is the store's own configuration error, naming the
// variable, which the function reports at cold start.
func TestStoreFromEnvConfigError(t *testing.T) {
	t.Setenv("IDEMPOTENCY_STORE", "redis")
	t.Setenv("REDIS_URL", "")
	_, err := storeFromEnv(context.Background())
	if cfgErr, ok := errors.AsType[*idempotency.ConfigError](err); !ok || cfgErr.Name != redis.URLEnv {
		t.Errorf("storeFromEnv() error %v, want a *idempotency.ConfigError naming %s", err, redis.URLEnv)
	}
}

// TestResponsesFromEnv checks that IDEMPOTENCY_RESPONSES_* wrap the store,
// that none of them leaves it as it is, that a bad value stops the cold
// start, and that a key KMS refuses stops the first invocation, before
// any record is written: the store checks the key and the bucket then,
// with a request each, so they are moto's.
func TestResponsesFromEnv(t *testing.T) {
	inner, err := dynamo.New(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), func(o *dynamo.Options) { o.TableName = "t" })
	if err != nil {
		t.Fatal(err)
	}
	r := newResponses(t, testenv.Endpoint(t, testenv.MotoEnv))
	tests := []struct {
		name    string
		env     map[string]string
		wrapped bool
		wantErr string // in the error's message; "": no error
		// firstErr is the *ConfigError's Name of the first invocation's
		// Acquire; "": not tried.
		firstErr string
	}{
		{"none", nil, false, "", ""},
		{"key", map[string]string{"IDEMPOTENCY_RESPONSES_KEY": r.alias}, true, "", ""},
		{"bucket", map[string]string{"IDEMPOTENCY_RESPONSES_BUCKET": r.bucket}, true, "", ""},
		{"gzip", map[string]string{"IDEMPOTENCY_RESPONSES_GZIP_MIN": "4096"}, true, "", ""},
		{"all", map[string]string{"IDEMPOTENCY_RESPONSES_KEY": r.alias, "IDEMPOTENCY_RESPONSES_BUCKET": r.bucket, "IDEMPOTENCY_RESPONSES_GZIP_MIN": "0"}, true, "", ""},
		{"key not in KMS", map[string]string{"IDEMPOTENCY_RESPONSES_KEY": r.alias + "-missing"}, true, "", "responsestore.WithKMS"},
		{"gzip not a size", map[string]string{"IDEMPOTENCY_RESPONSES_GZIP_MIN": "4k"}, false, "IDEMPOTENCY_RESPONSES_GZIP_MIN", ""},
		{"gzip negative", map[string]string{"IDEMPOTENCY_RESPONSES_GZIP_MIN": "-1"}, false, "IDEMPOTENCY_RESPONSES_GZIP_MIN", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AWS_REGION", "us-east-1")
			t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "payments")
			for _, kv := range r.env() {
				name, v, _ := strings.Cut(kv, "=")
				t.Setenv(name, v)
			}
			for _, name := range []string{responsesKeyEnv, responsesBucketEnv, responsesGzipMinEnv} {
				t.Setenv(name, "")
			}
			for name, v := range tt.env {
				t.Setenv(name, v)
			}
			store, err := responsesFromEnv(context.Background(), inner, slog.New(slog.DiscardHandler))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("responsesFromEnv() = %T, %v; want an error naming %s", store, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("responsesFromEnv(): %v", err)
			}
			if wrapped := store != idempotency.Store(inner); wrapped != tt.wrapped {
				t.Errorf("responsesFromEnv() = %T, wrapped %v; want wrapped %v", store, wrapped, tt.wrapped)
			}
			// The DynamoDB store commits staged writes with the record;
			// the wrapper must still let the middleware do so.
			if _, ok := store.(idempotency.Invoker); !ok {
				t.Errorf("responsesFromEnv() = %T, not an idempotency.Invoker as the DynamoDB store is", store)
			}
			if tt.firstErr != "" {
				err := firstAcquire(store)
				if cfgErr, ok := err.(*idempotency.ConfigError); !ok || cfgErr.Name != tt.firstErr {
					t.Errorf("the first Acquire: %v, want a *idempotency.ConfigError naming %s", err, tt.firstErr)
				}
			}
		})
	}
}

// The KMS encryption context is the function's name: without
// AWS_LAMBDA_FUNCTION_NAME, the store's own configuration error.
func TestResponsesFromEnvNeedsAFunctionName(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "")
	t.Setenv(responsesKeyEnv, "alias/payments-responses")
	_, err := responsesFromEnv(context.Background(), idempotencytest.NewStore(), slog.New(slog.DiscardHandler))
	if cfgErr, ok := errors.AsType[*idempotency.ConfigError](err); !ok || cfgErr.Name != "responsestore.WithFunctionName" {
		t.Errorf("responsesFromEnv() error %v, want a *idempotency.ConfigError naming responsestore.WithFunctionName", err)
	}
}

// firstAcquire is the error of the first invocation's Acquire on store.
func firstAcquire(store idempotency.Store) error {
	now := time.Now()
	_, err := store.Acquire(context.Background(), &idempotency.Record{Key: "payments#1", Status: idempotency.StatusInProgress,
		Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute)}, now)
	return err
}
