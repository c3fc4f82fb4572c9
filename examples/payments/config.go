package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
	"github.com/gopowertools/lambda/redis"
)

const defaultProviderTimeout = 5 * time.Second

// The stores IDEMPOTENCY_STORE chooses from.
const (
	storeDynamoDB     = "dynamodb"      // the default
	storeRedis        = "redis"         // a Redis or Valkey server, or a replication group's primary
	storeRedisCluster = "redis-cluster" // a Redis Cluster: ElastiCache Serverless or cluster mode on, MemoryDB
)

// The variables that change how responses are stored
// (docs/large-and-sensitive-responses.md). Each is off when unset.
const (
	responsesKeyEnv     = "IDEMPOTENCY_RESPONSES_KEY"      // a KMS key: encrypt every response
	responsesBucketEnv  = "IDEMPOTENCY_RESPONSES_BUCKET"   // an S3 bucket: offload the large ones
	responsesGzipMinEnv = "IDEMPOTENCY_RESPONSES_GZIP_MIN" // bytes: gzip responses at least this long
)

// newAppFromEnv builds the function from its environment.
func newAppFromEnv(ctx context.Context, log *slog.Logger) (*App, error) {
	store, err := storeFromEnv(ctx)
	if err != nil {
		return nil, err
	}
	if store, err = responsesFromEnv(ctx, store, log); err != nil {
		return nil, err
	}
	providerURL := os.Getenv("PAYMENT_PROVIDER_URL")
	if providerURL == "" {
		return nil, errors.New("PAYMENT_PROVIDER_URL is not set")
	}
	timeout := defaultProviderTimeout
	if v := os.Getenv("PAYMENT_PROVIDER_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("PAYMENT_PROVIDER_TIMEOUT=%q is not a positive Go duration such as 5s", v)
		}
		timeout = d
	}
	provider := &ProviderClient{BaseURL: providerURL, Timeout: timeout, HTTP: http.DefaultClient}
	return NewApp(store, provider, log, appOptions(log)...)
}

// storeFromEnv makes the store IDEMPOTENCY_STORE names: the DynamoDB table
// of POWERTOOLS_IDEMPOTENCY_TABLE (dynamodb, the default), or the server
// of REDIS_URL (redis, redis-cluster). Only the chosen store's variables
// are read; the choice is never guessed from which of them are set, so a
// REDIS_URL meant for something else does not move the records.
func storeFromEnv(ctx context.Context) (idempotency.Store, error) {
	switch kind := os.Getenv("IDEMPOTENCY_STORE"); kind {
	case "", storeDynamoDB:
		table := os.Getenv("POWERTOOLS_IDEMPOTENCY_TABLE")
		if table == "" {
			return nil, errors.New("POWERTOOLS_IDEMPOTENCY_TABLE is not set")
		}
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("AWS configuration: %w", err)
		}
		return storeOrError(dynamo.New(dynamodb.NewFromConfig(cfg), func(o *dynamo.Options) {
			o.TableName = table
		}))
	case storeRedis:
		client, err := redis.ClientFromEnv()
		if err != nil {
			return nil, err
		}
		return storeOrError(redis.New(client))
	case storeRedisCluster:
		client, err := redis.ClusterClientFromEnv()
		if err != nil {
			return nil, err
		}
		return storeOrError(redis.New(client))
	default:
		return nil, fmt.Errorf("IDEMPOTENCY_STORE=%q: want %s (the default), %s or %s", kind, storeDynamoDB, storeRedis, storeRedisCluster)
	}
}

// responsesFromEnv wraps store in a responsestore that gzips, encrypts
// and offloads the responses as IDEMPOTENCY_RESPONSES_* say, whichever
// store it is; with none of them set, it returns store as it is, which
// stores each response as the handler returned it. The KMS encryption
// context is the function's name (AWS_LAMBDA_FUNCTION_NAME), which the
// key policy in template.yaml requires.
func responsesFromEnv(ctx context.Context, store idempotency.Store, log *slog.Logger) (idempotency.Store, error) {
	key, bucket, gzipMin := os.Getenv(responsesKeyEnv), os.Getenv(responsesBucketEnv), os.Getenv(responsesGzipMinEnv)
	if key == "" && bucket == "" && gzipMin == "" {
		return store, nil
	}
	opts := []responsestore.Option{responsestore.WithLogger(log)}
	if gzipMin != "" {
		n, err := strconv.Atoi(gzipMin)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s=%q is not a size in bytes such as 4096", responsesGzipMinEnv, gzipMin)
		}
		opts = append(opts, responsestore.WithCompression(n))
	}
	if key != "" || bucket != "" {
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("AWS configuration: %w", err)
		}
		if key != "" {
			opts = append(opts, responsestore.WithKMS(kms.NewFromConfig(cfg), key))
		}
		if bucket != "" {
			opts = append(opts, responsestore.WithS3(s3.NewFromConfig(cfg), bucket))
		}
	}
	return responsestore.New(store, opts...)
}

// storeOrError returns s as a Store, or the error: a nil *S in the
// interface would not be a nil Store.
func storeOrError[S idempotency.Store](s S, err error) (idempotency.Store, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}

// appOptions is the middleware's configuration. The key is required: a
// payment whose key path selects nothing (a typo in the template's path,
// say) must fail rather than charge without idempotency.
func appOptions(log *slog.Logger) []idempotency.Option {
	return append(keyPathOptions(), idempotency.WithKeyRequired(true), idempotency.WithLogger(log))
}

// keyPathOptions gives the function's key paths as defaults: template.yaml
// sets them per function through the environment, which overrides them
// (a test checks that the two agree); a local run uses
// these.
func keyPathOptions() []idempotency.Option {
	return []idempotency.Option{idempotency.WithDefaults(
		idempotency.WithEventKey(eventKeyPath),
		idempotency.WithPayloadValidation(validationPath),
	)}
}
