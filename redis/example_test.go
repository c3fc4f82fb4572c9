package redis_test

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/redis"
	goredis "github.com/redis/go-redis/v9"
)

type Order struct {
	OrderID string `json:"order_id"`
	Amount  int64  `json:"amount"`
}

type Receipt struct {
	OrderID string `json:"order_id"`
	Status  string `json:"status"`
}

func fulfil(ctx context.Context, o Order) (Receipt, error) {
	return Receipt{OrderID: o.OrderID, Status: "fulfilled"}, nil
}

// A function whose records are kept on the server named by REDIS_URL,
// such as rediss://app:PASSWORD@master.orders.abc123.use1.cache.amazonaws.com:6379
// for an ElastiCache replication group with in-transit encryption and an
// ACL user. The client and the store are made once, at cold start.
// (Compiled, not run: it needs the server and the Lambda runtime.)
func ExampleClientFromEnv() {
	client, err := redis.ClientFromEnv()
	if err != nil {
		log.Fatal(err) // a *idempotency.ConfigError when REDIS_URL is unset or invalid
	}
	store, err := redis.New(client)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(idempotency.Wrap(store, fulfil,
		idempotency.WithEventKey("order_id"),
		idempotency.WithPayloadValidation("amount"),
	))
}

// A cluster (ElastiCache with cluster mode on, ElastiCache Serverless,
// MemoryDB): REDIS_URL names its configuration endpoint, as in
// rediss://app:PASSWORD@clustercfg.orders.abc123.use1.cache.amazonaws.com:6379
// (Compiled, not run: it needs the cluster and the Lambda runtime.)
func ExampleClusterClientFromEnv() {
	client, err := redis.ClusterClientFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	store, err := redis.New(client)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(idempotency.Wrap(store, fulfil, idempotency.WithEventKey("order_id")))
}

// Any go-redis client will do, with its own options: here Sentinel, with
// ContextTimeoutEnabled so that a hung server cannot hold an invocation
// past its deadline. Options of the store are set by functions. New asks
// the server whether it is a cluster node, and refuses a client of the
// wrong kind with a *idempotency.ConfigError. (Compiled, not run: it
// needs the Sentinels and the Lambda runtime.)
func ExampleNew() {
	client := goredis.NewFailoverClient(&goredis.FailoverOptions{
		MasterName:            "orders",
		SentinelAddrs:         []string{"sentinel-1:26379", "sentinel-2:26379", "sentinel-3:26379"},
		ContextTimeoutEnabled: true,
	})
	store, err := redis.New(client, func(o *redis.Options) {
		o.KeyPrefix = "orders:idempotency:"
		o.MaxRecordSize = 64 << 10
	})
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(idempotency.Wrap(store, fulfil, idempotency.WithEventKey("order_id")))
}
