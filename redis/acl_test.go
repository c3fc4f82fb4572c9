package redis

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
	"github.com/redis/go-redis/v9"
)

// aclRules are the ACL rules of a user that can run the store and nothing
// more, on the keys under its prefix; docs/redis.md gives them as an
// ElastiCache access string. The commands a script calls are checked
// against the user's rules as if they were sent alone. A client sends
// HELLO and CLIENT SETINFO when it connects, which every user may send.
var aclRules = []string{
	"-@all",
	"+evalsha", "+eval",
	"+exists", "+hmget", "+hget", "+hgetall", "+hset", "+del", "+pexpire",
}

// aclClusterRules are the rules a cluster client needs besides: it reads
// the cluster's layout (CLUSTER SLOTS) and the commands' key positions
// (COMMAND; without it the client still works, but logs an error on every
// connection).
var aclClusterRules = []string{"+cluster|slots", "+command"}

// TestACLUser runs the conformance suite as a user that has only
// aclRules (and aclClusterRules on a cluster), on its key prefix: the
// store needs no other command and no other key.
func TestACLUser(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			prefix := testPrefix(t)
			c := srv.userClient(t, newACLUser(t, srv, "on", append([]string{"~" + prefix + "*"}, aclRules...)...), "s3cret")
			s, err := New(c, func(o *Options) { o.KeyPrefix = prefix })
			if err != nil {
				t.Fatal(err)
			}
			idempotencytest.TestStore(t, func(*testing.T) idempotency.Store { return s })
			// Outside its prefix, the user can do nothing.
			other, _ := New(c, func(o *Options) { o.KeyPrefix = "elsewhere:" })
			if _, err := other.Get(t.Context(), "k"); err == nil || !strings.Contains(err.Error(), "NOPERM") {
				t.Errorf("Get outside the prefix: %v, want NOPERM", err)
			}
		})
	}
}

// newACLUser makes an ACL user, in state (on or off), with the password
// s3cret and rules (those of a cluster client added on a cluster), on
// every node of srv, deleted when the test ends, and returns its name.
func newACLUser(t *testing.T, srv server, state string, rules ...string) string {
	t.Helper()
	admin := srv.client(t)
	user := fmt.Sprintf("user-%d-%d", time.Now().UnixNano(), aclUsers.Add(1))
	setUser := append([]any{"ACL", "SETUSER", user, "reset", state, ">s3cret"}, anys(rules)...)
	if srv.cluster {
		setUser = append(setUser, anys(aclClusterRules)...)
	}
	forEachNode(t, admin, func(c *redis.Client) error { return c.Do(t.Context(), setUser...).Err() })
	t.Cleanup(func() {
		// t.Context is done by now.
		forEachNode(t, admin, func(c *redis.Client) error { return c.Do(context.Background(), "ACL", "DELUSER", user).Err() })
	})
	return user
}

// aclUsers numbers the users that newACLUser makes, which tests running
// in parallel may make at once.
var aclUsers atomic.Int64

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// forEachNode runs fn on the server, or on every node of a cluster: ACL
// users are each node's own.
func forEachNode(t *testing.T, c redis.UniversalClient, fn func(*redis.Client) error) {
	t.Helper()
	var err error
	switch c := c.(type) {
	case *redis.ClusterClient:
		err = c.ForEachShard(context.Background(), func(_ context.Context, n *redis.Client) error { return fn(n) })
	case *redis.Client:
		err = fn(c)
	}
	if err != nil {
		t.Fatal(err)
	}
}
