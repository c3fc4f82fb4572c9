package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gopowertools/lambda/internal/redismode"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// This file is the store's look at its server, which [New] leaves to the
// first call so that it sends no command and takes no context: the
// client's kind, before the first command of any method, and the ACL
// user's rights, before the first Acquire. Each is asked on the first
// call (in Lambda, the first invocation after a cold start), and on each
// one after until it passes.

// checkKind returns a [*idempotency.ConfigError] when the client is of
// the wrong kind for the server it reaches, which it asks with one
// command (HELLO, see [redismode.Of]). A *redis.Client on a node of a
// Redis Cluster reaches only the keys of that node: every other key fails
// with MOVED, on some invocations and not others, long after the
// deployment looked fine; and an operator's scan through it sees one
// node's records and calls it all. A *redis.ClusterClient on a server not
// in cluster mode fails on every command.
//
// A *redis.ClusterClient with its own ClusterSlots function (what
// redis.NewFailoverClusterClient makes) and any other client (a
// *redis.Ring, a client of the caller's) are not checked: the servers
// behind them are the caller's choice. A server that does not answer
// HELLO (Redis before 6.2, or a client whose credentials it refuses, which
// checkAccess then names) is not checked either.
func (s *Store) checkKind(ctx context.Context) error {
	_, cluster := s.client.(*redis.ClusterClient)
	switch c := s.client.(type) {
	case *redis.Client:
	case *redis.ClusterClient:
		if c.Options().ClusterSlots != nil {
			return nil
		}
	default:
		return nil
	}
	bounded, cancel := bound(ctx)
	defer cancel()
	mode, err := redismode.Of(bounded, s.client)
	if err != nil {
		return fmt.Errorf("redis: asking the server whether it is a cluster node: %w", boundError(ctx, bounded, err))
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

// checkKey is the key, under the prefix, that checkAccess asks about. It
// is never read or written.
const checkKey = "redis-store-check"

// checkScript returns the commands of the store that the user running it
// may not send on KEYS[1] (redis.acl_check_cmd, which runs none of them):
// those the middleware's scripts call, EVALSHA, and WAIT when ARGV[1] is
// "wait". It returns 0 on a server that cannot say (before Redis 7).
var checkScript = redis.NewScript(`
if not redis.acl_check_cmd then
	return 0
end
local key = KEYS[1]
local commands = {
	{'EVALSHA', '0000000000000000000000000000000000000000', '1', key},
	{'EXISTS', key}, {'HMGET', key, 'status'}, {'HGET', key, 'status'},
	{'HGETALL', key}, {'HSET', key, 'status', 'x'}, {'DEL', key},
	{'PEXPIRE', key, '1'},
}
if ARGV[1] == 'wait' then
	table.insert(commands, {'WAIT', '1', '0'})
end
local denied = {}
for _, c in ipairs(commands) do
	if not redis.acl_check_cmd(unpack(c)) then
		table.insert(denied, c[1])
	end
end
return denied
`)

// checkAccess checks the client's kind, then asks the server, with one
// EVAL of checkScript, whether the client's user may send every command
// of the store on its keys, and returns a [*idempotency.ConfigError] when
// it may not (the server's NOPERM, or the commands checkScript names), or
// when the server refuses the client's credentials (WRONGPASS, NOAUTH).
// A user without one of them would otherwise be found later, and worse:
// by the first duplicate (HGETALL), by the Complete after the handler ran
// (HGET), or half way through writing a record (PEXPIRE, after HSET).
func (s *Store) checkAccess(ctx context.Context) error {
	if err := s.kind.Do(ctx, s.checkKind); err != nil {
		return err
	}
	wait := ""
	if s.opts.WaitReplicas > 0 {
		wait = "wait"
	}
	bounded, cancel := bound(ctx)
	defer cancel()
	reply, err := checkScript.Eval(bounded, s.client, s.key(checkKey), wait).Result()
	var denied []string
	switch {
	case redis.HasErrorPrefix(err, "WRONGPASS"), redis.HasErrorPrefix(err, "NOAUTH"):
		return &idempotency.ConfigError{Name: "redis.New client", Err: fmt.Errorf(
			"the server refused the client's credentials: give those of an enabled user, in %s or the client's Username and Password: %w", URLEnv, err)}
	case redis.HasErrorPrefix(err, "NOPERM"):
		denied = []string{err.Error()}
	case err != nil:
		return fmt.Errorf("redis: asking the server what the client's user may do: %w", boundError(ctx, bounded, err))
	}
	if names, ok := reply.([]any); ok {
		for _, n := range names {
			denied = append(denied, fmt.Sprint(n))
		}
	}
	if len(denied) == 0 {
		return nil
	}
	return &idempotency.ConfigError{Name: "redis ACL", Err: fmt.Errorf(
		"the client's user may not send every command the store needs on its keys, ~%s* (docs/redis.md gives the rules): the server refuses %s",
		globEscape(s.opts.KeyPrefix), strings.Join(denied, ", "))}
}
