package redis

import (
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// URLEnv is the environment variable that names the server:
// [ClientFromEnv] and [ClusterClientFromEnv] read it. REDIS_URL is what
// Redis clients and hosting platforms have long used for a server's URL,
// and go-redis parses it: redis://[user:password@]host:port[/db], or
// rediss:// for TLS (ElastiCache's in-transit encryption), with go-redis
// options as query parameters (?dial_timeout=3s&max_retries=5).
// Powertools for AWS Lambda (Python, TypeScript) reads no variable for its
// Redis layer: it takes the client in code, as [New] does.
const URLEnv = "REDIS_URL"

// ClientFromEnv returns a client for the standalone server, or the
// primary endpoint of a replication group, named by REDIS_URL, as
// [redis.ParseURL] reads it, with ContextTimeoutEnabled on: each command
// ends when its context does, so that a hung server cannot hold an
// invocation past the time [Store] keeps to answer (docs/redis.md). An
// unset or invalid REDIS_URL gives a [*idempotency.ConfigError] naming it,
// which does not repeat the URL: it may hold a password. No command is
// sent; [New] finds out whether the server is a cluster node, for which
// this is the wrong client.
func ClientFromEnv() (*redis.Client, error) {
	opt, err := parseEnv(redis.ParseURL)
	if err != nil {
		return nil, err
	}
	opt.ContextTimeoutEnabled = true
	return redis.NewClient(opt), nil
}

// ClusterClientFromEnv returns a client for the Redis Cluster (ElastiCache
// with cluster mode on, ElastiCache Serverless, MemoryDB) whose
// configuration endpoint, or any node, REDIS_URL names, as
// [redis.ParseClusterURL] reads it: more nodes to start from may follow as
// addr=host:port parameters, with ContextTimeoutEnabled on, as
// [ClientFromEnv]. Errors are those of ClientFromEnv. No command is sent:
// the client learns the cluster's layout on first use, [New]'s.
//
// For Sentinel, parse REDIS_URL with [redis.ParseFailoverURL] and make the
// client with [redis.NewFailoverClient], with ContextTimeoutEnabled.
func ClusterClientFromEnv() (*redis.ClusterClient, error) {
	opt, err := parseEnv(redis.ParseClusterURL)
	if err != nil {
		return nil, err
	}
	opt.ContextTimeoutEnabled = true
	return redis.NewClusterClient(opt), nil
}

func parseEnv[O any](parse func(string) (*O, error)) (*O, error) {
	raw := os.Getenv(URLEnv)
	if raw == "" {
		return nil, &idempotency.ConfigError{Name: URLEnv, Err: errors.New("not set")}
	}
	opt, err := parse(raw)
	if err != nil {
		// url.Parse's errors quote the whole URL, password included.
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err
		}
		return nil, &idempotency.ConfigError{Name: URLEnv, Err: fmt.Errorf("not a Redis URL: %w", err)}
	}
	return opt, nil
}
