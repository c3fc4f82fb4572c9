package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/redis"
	goredis "github.com/redis/go-redis/v9"
)

// redisServer is a Redis-compatible server, or cluster, that
// scripts/with-servers.sh starts: its addresses are in env.
type redisServer struct {
	name    string
	env     string
	cluster bool
	// detect: the command is given one node's URL without --cluster, and
	// must find the cluster itself.
	detect bool
}

var redisServers = []redisServer{
	{"valkey", "TEST_VALKEY_ADDR", false, false},
	{"redis", "TEST_REDIS_ADDR", false, false},
	{"valkey-cluster", "TEST_VALKEY_CLUSTER_ADDRS", true, false},
	{"valkey-cluster, one node without --cluster", "TEST_VALKEY_CLUSTER_ADDRS", true, true},
}

// url returns the server's URL as the command takes it, with timeouts
// that a loaded machine does not reach (go-redis's are 3 s), or skips
// (fails under CI).
func (srv redisServer) url(t *testing.T) string {
	t.Helper()
	v := os.Getenv(srv.env)
	if v == "" {
		testenv.Unavailable(t, "%s is not set: no %s server (scripts/with-servers.sh starts one)", srv.env, srv.name)
	}
	addrs := strings.Split(v, ",")
	u := "redis://" + addrs[0] + "?dial_timeout=30s&read_timeout=30s&write_timeout=30s"
	if srv.detect {
		return u
	}
	for _, addr := range addrs[1:] {
		u += "&addr=" + addr
	}
	return u
}

// newRedisWorld returns a world on the server, its records at a key
// prefix of the test's own. list reads them 3 keys to a SCAN, so that a
// few records take several pages.
func newRedisWorld(t *testing.T, srv redisServer) *world {
	t.Helper()
	u := srv.url(t)
	client, err := newRedisClient(u, srv.cluster)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	prefix := fmt.Sprintf("cmdtest:%s:%d:", t.Name(), time.Now().UnixNano())
	store, err := redis.New(client, func(o *redis.Options) { o.KeyPrefix = prefix })
	if err != nil {
		t.Fatal(err)
	}
	w := &world{
		h:     &harness{scanCount: 3},
		where: []string{"--store", "redis", "--redis-url", u, "--redis-key-prefix", prefix},
		store: store, redisURL: u, redisPrefix: prefix,
		shop: newShop(t, store),
		putCorrupted: func(t *testing.T, key string) {
			if err := client.HSet(t.Context(), prefix+key, "status", "DONE").Err(); err != nil {
				t.Fatal(err)
			}
		},
	}
	if srv.cluster && !srv.detect {
		w.where = append(w.where, "--cluster")
	}
	w.flags = append(slices.Clone(w.where), "--event-key", "order_id", "--payload-validation", "amount", "--function-name", "orders-fn")
	return w
}

// beforeScriptWrite is a hook that runs fn before each script the command
// sends with arguments: the writes (Delete, Reclaim), not Get, whose
// script has none.
func beforeScriptWrite(fn func()) goredis.Hook { return scriptHook(fn) }

type scriptHook func()

func (h scriptHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h scriptHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		// EVALSHA sha numkeys key [arg...], and EVAL after NOSCRIPT.
		if name := cmd.Name(); (name == "evalsha" || name == "eval") && len(cmd.Args()) > 4 {
			h()
		}
		return next(ctx, cmd)
	}
}

func (h scriptHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// TestRedisFlags: the server comes from --redis-url, else REDIS_URL; the
// flags of one store are refused with the other; a URL that does not
// parse is reported without its password.
func TestRedisFlags(t *testing.T) {
	t.Parallel()
	w := newRedisWorld(t, redisServers[0])
	const ev = `{"order_id":"o-1","amount":1250}`
	w.shop.invoke(t, ev)
	key := w.keyOf(t, ev)
	file := writeFile(t, "event.json", ev)
	u, prefix := w.redisURL, w.redisPrefix

	env := w.with()
	env.env = map[string]string{"REDIS_URL": u, "POWERTOOLS_IDEMPOTENCY_TABLE": "ignored"}
	r := env.run(t, "inspect", "--store", "redis", "--redis-key-prefix", prefix, "--key", key).want(t, exitOK)
	wantField(t, r, "status", "COMPLETED")
	r = env.run(t, "list", "--store", "redis", "--redis-key-prefix", prefix, "--json").want(t, exitOK)
	if !strings.Contains(r.stdout, key) {
		t.Errorf("list with REDIS_URL: %v", r)
	}
	// Another prefix: other records.
	r = env.run(t, "inspect", "--store", "redis", "--key", key).want(t, exitOK)
	wantContains(t, r, "no record of key "+key)

	for name, args := range map[string][]string{
		"no such store":                {"inspect", "--store", "memcached", "--key", key},
		"--redis-url, DynamoDB":        {"inspect", "--table", "t", "--redis-url", u, "--key", key},
		"--cluster, DynamoDB":          {"list", "--table", "t", "--cluster"},
		"--redis-key-prefix, DynamoDB": {"forget", "--table", "t", "--redis-key-prefix", "x:", "--key", key},
		"--table, Redis":               {"resolve", "--store", "redis", "--redis-url", u, "--table", "t", "--failed", "--key", key},
	} {
		t.Run(name, func(t *testing.T) {
			if r := w.h.run(t, args...).want(t, exitUsage); r.stderr == "" {
				t.Errorf("no reason given: %v", r)
			}
		})
	}

	for name, args := range map[string][]string{
		"no URL":          {"list", "--store", "redis"},
		"not a URL":       {"list", "--store", "redis", "--redis-url", "redis://app:s3cret@host:port"},
		"unknown option":  {"inspect", "--store", "redis", "--redis-url", "redis://app:s3cret@host/0?no_such_option=1", "--event-key", "order_id", "--function-name", "f", file},
		"cluster option":  {"forget", "--store", "redis", "--cluster", "--redis-url", "redis://app:s3cret@host:port", "--key", key},
		"no server there": {"inspect", "--store", "redis", "--redis-url", "redis://127.0.0.1:1?dial_timeout=1s&max_retries=-1", "--key", key},
	} {
		t.Run(name, func(t *testing.T) {
			r := (&harness{}).run(t, args...).want(t, exitFailed)
			if r.stderr == "" || strings.Contains(r.stderr, "s3cret") {
				t.Errorf("the reason is missing, or shows the password: %v", r)
			}
		})
	}
}

// TestListAcrossNodesAndPages: list reads every record, whichever node of
// a cluster holds it, a few keys to a SCAN.
func TestListAcrossNodesAndPages(t *testing.T) {
	t.Parallel()
	for _, srv := range redisServers {
		t.Run(srv.name, func(t *testing.T) {
			w := newRedisWorld(t, srv)
			now := time.Now()
			want := map[string]bool{}
			for i := range 40 {
				rec := &idempotency.Record{Key: fmt.Sprintf("orders-fn#%02d", i), Status: idempotency.StatusInProgress,
					Expiry: now.Add(time.Hour), LeaseEnd: now.Add(-time.Minute), LeaseToken: fmt.Sprint("t-", i)}
				if _, err := w.store.Acquire(t.Context(), rec, now.Add(-2*time.Minute)); err != nil {
					t.Fatal(err)
				}
				want[rec.Key] = true
			}
			if srv.cluster {
				if n := clusterNodes(t, w, slices.Collect(maps.Keys(want))); n != 3 {
					t.Fatalf("the records are on %d nodes, want 3", n)
				}
			}

			terminal := w.with()
			terminal.terminal = true
			r := terminal.run(t, w.at("list", "--json", "--status", "stuck")...).want(t, exitOK)
			got := map[string]bool{}
			for line := range strings.Lines(r.stdout) {
				var v recordView
				if err := parseJSON(line, &v); err != nil {
					t.Fatal(err)
				}
				got[v.Key] = true
			}
			if !maps.Equal(got, want) {
				t.Errorf("listed %d records, want the %d written:\n%v", len(got), len(want), r)
			}
			// A progress line after each page: COUNT is a hint, and a
			// SCAN may return a few more keys than 3.
			if pages := strings.Count(r.stderr, "\r\033[Kscanned "); pages < 4 {
				t.Errorf("%d pages, want several (3 keys to a SCAN)", pages)
			}
			if !strings.Contains(r.stderr, "40 records listed") || !strings.Contains(r.stderr, "keys scanned") {
				t.Errorf("summary: %q", r.stderr)
			}
		})
	}
}

// clusterNodes returns on how many nodes of the world's cluster the
// records of keys are, by CLUSTER KEYSLOT and CLUSTER SHARDS (each shard of
// the test cluster is one node).
func clusterNodes(t *testing.T, w *world, keys []string) int {
	t.Helper()
	ctx := t.Context()
	client, err := newRedisClient(w.redisURL, true)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c := client.(*goredis.ClusterClient)
	shards, err := c.ClusterShards(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[int]bool{}
	for _, key := range keys {
		slot := c.ClusterKeySlot(ctx, w.redisPrefix+key).Val()
		for i, shard := range shards {
			for _, r := range shard.Slots {
				if r.Start <= slot && slot <= r.End {
					nodes[i] = true
				}
			}
		}
	}
	return len(nodes)
}
