package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gopowertools/lambda/internal/redismode"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// checkTimeout bounds the command that [New] sends. New takes no context,
// and runs at cold start, where Lambda allows 10 s for the whole of the
// function's initialisation.
const checkTimeout = 5 * time.Second

// checkClient returns a [*idempotency.ConfigError] when client is of the
// wrong kind for the server it reaches, which it asks with one command
// (HELLO, see [redismode.Of]). A *redis.Client on a node of a Redis
// Cluster reaches only the keys of that node: every other key fails with
// MOVED, on some invocations and not others, long after the deployment
// looked fine; and an operator's scan through it sees one node's records
// and calls it all. A *redis.ClusterClient on a server not in cluster mode
// fails on every command. Both are found here, at cold start, at the cost
// of one round trip (and of the connection, which the first invocation
// would otherwise open).
//
// A *redis.ClusterClient with its own ClusterSlots function (what
// redis.NewFailoverClusterClient makes) and any other client (a
// *redis.Ring, a client of the caller's) are not checked: the servers
// behind them are the caller's choice. A server that does not answer
// HELLO (Redis before 6.2) is not checked either.
func checkClient(client redis.UniversalClient) error {
	_, cluster := client.(*redis.ClusterClient)
	switch c := client.(type) {
	case *redis.Client:
	case *redis.ClusterClient:
		if c.Options().ClusterSlots != nil {
			return nil
		}
	default:
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	mode, err := redismode.Of(ctx, client)
	if err != nil {
		return fmt.Errorf("redis: New: asking the server whether it is a cluster node: %w", err)
	}
	var why string
	switch {
	case mode == redismode.Cluster && !cluster:
		why = "the server is a node of a Redis Cluster, of whose keys a *redis.Client reaches only that node's (the others fail with MOVED): make a *redis.ClusterClient, with ClusterClientFromEnv for the same " + URLEnv + ", or with redis.NewClusterClient"
	case mode == redismode.Sentinel && !cluster:
		why = "the server is a Sentinel, which keeps no records: make the client with redis.NewFailoverClient, naming the Sentinels and the primary's name"
	case mode == redismode.Standalone && cluster:
		why = "the server is not a node of a Redis Cluster (a standalone server, or a replication group's primary endpoint), and a *redis.ClusterClient cannot use it: make a *redis.Client, with ClientFromEnv for the same " + URLEnv + ", or with redis.NewClient"
	default:
		return nil
	}
	return &idempotency.ConfigError{Name: "redis.New client", Err: errors.New(why)}
}
