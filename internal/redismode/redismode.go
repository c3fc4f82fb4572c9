// Package redismode asks a Redis or Valkey server which mode it runs in: a
// standalone server, a node of a Redis Cluster, or a Sentinel. The mode
// decides which go-redis client can use the server: a *redis.Client reaches
// only the keys of the one node it is connected to, a *redis.ClusterClient
// refuses a server that is not a cluster node. The redis store asks it to
// refuse the wrong client on its first use; an operator's tool that is
// given a URL asks it to make the right one.
package redismode

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Mode is what a server says it runs as, in the "mode" field of its HELLO
// reply.
type Mode string

const (
	Standalone Mode = "standalone"
	Cluster    Mode = "cluster"
	Sentinel   Mode = "sentinel"
	// Unknown: the server refused HELLO without arguments (Redis before
	// 6.2, or a proxy that does not know it), or its reply had no mode.
	Unknown Mode = ""
)

// Of returns the mode of the server that c sends keyless commands to, with
// one command: HELLO without arguments, which answers with the server's
// name, version and mode and, unlike HELLO with a protocol version, leaves
// the connection's protocol as it is. Redis and Valkey run HELLO for any
// user, whatever its ACL rules (it is one of the commands a connection may
// send before it authenticates), so no permission is needed.
//
// A *redis.ClusterClient asks its nodes for the cluster's layout (CLUSTER
// SLOTS) before it sends HELLO; a server not in cluster mode refuses, and
// Of returns [Standalone]. A server that answers HELLO with an error gives
// [Unknown]. An error is a failure to get an answer: the server could not
// be reached, or the context ended.
func Of(ctx context.Context, c redis.UniversalClient) (Mode, error) {
	reply, err := c.Do(ctx, "hello").Result()
	var refused redis.Error
	switch {
	case clusterDisabled(err):
		return Standalone, nil
	case errors.As(err, &refused):
		return Unknown, nil
	case err != nil:
		return Unknown, err
	}
	// RESP3 makes the reply a map; RESP2 a flat list of names and values.
	switch r := reply.(type) {
	case map[any]any:
		return mode(r["mode"]), nil
	case []any:
		for i := 0; i+1 < len(r); i += 2 {
			if r[i] == "mode" {
				return mode(r[i+1]), nil
			}
		}
		return Unknown, nil
	}
	return Unknown, fmt.Errorf("redismode: HELLO answered %T", reply)
}

func mode(v any) Mode {
	s, _ := v.(string)
	return Mode(s)
}

// clusterDisabled reports whether err is a server's refusal of a cluster
// command because it is not in cluster mode.
func clusterDisabled(err error) bool {
	return redis.HasErrorPrefix(err, "This instance has cluster support disabled")
}
