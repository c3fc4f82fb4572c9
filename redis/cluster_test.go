package redis

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/redismode"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// TestWrongClientRefused: New finds, with one command, a client of the
// wrong kind for its server, and refuses it with a *ConfigError whose
// message names the constructor to use instead. The case from the field:
// REDIS_URL names a node of a cluster, and ClientFromEnv's *redis.Client
// then reached that node's keys only, the others failing with MOVED on
// some invocations.
func TestWrongClientRefused(t *testing.T) {
	cluster := servers[2].addrs(t)[0]
	standalone := servers[0].addrs(t)[0]
	for _, c := range []struct {
		name     string
		url      string
		newer    func() (redis.UniversalClient, error)
		wantName string // the constructor the error names; "" for none
	}{
		{"ClientFromEnv on a cluster node", cluster, fromEnv(ClientFromEnv), "ClusterClientFromEnv"},
		{"ClusterClientFromEnv on a standalone server", standalone, fromEnv(ClusterClientFromEnv), "ClientFromEnv"},
		{"ClientFromEnv on a standalone server", standalone, fromEnv(ClientFromEnv), ""},
		{"ClusterClientFromEnv on a cluster node", cluster, fromEnv(ClusterClientFromEnv), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(URLEnv, "redis://"+c.url)
			client, err := c.newer()
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			// The connection first, so that its own setup (go-redis's
			// HELLO 3, CLIENT SETINFO) is not counted below.
			if err := client.Ping(t.Context()).Err(); err != nil && !redis.HasErrorPrefix(err, "This instance has cluster support disabled") {
				t.Fatal(err)
			}
			sent := &commands{}
			client.AddHook(sent)
			_, err = New(client)
			if c.wantName == "" {
				if err != nil {
					t.Fatalf("New: %v, want the store", err)
				}
			} else {
				ce, ok := errors.AsType[*idempotency.ConfigError](err)
				if !ok || ce.Name != "redis.New client" {
					t.Fatalf("New: %v, want a *ConfigError for redis.New client", err)
				}
				// The message is what the person deploying reads: it must
				// say what to do.
				if msg := ce.Err.Error(); !strings.Contains(msg, " "+c.wantName+" ") || !strings.Contains(msg, URLEnv) {
					t.Errorf("the error says %q; want it to name %s and %s", msg, c.wantName, URLEnv)
				}
			}
			sent.want(t, "New", map[string]int{"hello": 1})
		})
	}
}

func fromEnv[C redis.UniversalClient](f func() (C, error)) func() (redis.UniversalClient, error) {
	return func() (redis.UniversalClient, error) { return f() }
}

// TestNewUnreachable: a server that cannot be reached fails New, with its
// error, within the bound of the check; nothing is refused as
// misconfigured.
func TestNewUnreachable(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialerRetries: 1})
	defer client.Close()
	start := time.Now()
	_, err := New(client)
	if err == nil {
		t.Fatal("New on a closed port succeeded")
	}
	if _, ok := errors.AsType[*idempotency.ConfigError](err); ok {
		t.Errorf("New: %v, want the network's error, not a *ConfigError", err)
	}
	if d := time.Since(start); d > checkTimeout+time.Second {
		t.Errorf("New took %v, over the check's bound of %v", d, checkTimeout)
	}
}

// TestScanEveryPrimary: what an operator's list reads on a cluster. A
// *redis.Client on one node, which saw that node's records only (48 keys
// of 104, and exit status 0), is refused by New; a client made for the
// mode that redismode.Of reports, as cmd/idempotency makes it from a URL,
// scans every primary and reads every record.
func TestScanEveryPrimary(t *testing.T) {
	srv := servers[2]
	addrs := srv.addrs(t)
	c := srv.client(t)
	s := newStore(t, c)
	want := map[string]bool{}
	for _, rec := range operatorRecords(time.Now(), 40) {
		put(t, c, s, rec)
		want[rec.Key] = true
	}

	one := redis.NewClient(&redis.Options{Addr: addrs[0]})
	defer one.Close()
	if _, err := New(one, func(o *Options) { *o = s.opts }); err == nil {
		t.Fatal("New took a *redis.Client on a cluster node")
	}

	mode, err := redismode.Of(t.Context(), one)
	if err != nil || mode != redismode.Cluster {
		t.Fatalf("redismode.Of a cluster node = %q, %v; want %q", mode, err, redismode.Cluster)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs[:1]})
	defer cc.Close()
	all, err := New(cc, func(o *Options) { *o = s.opts })
	if err != nil {
		t.Fatal(err)
	}
	got, _, _, _ := scanAll(t, all, "")
	for key := range want {
		if got[key] == nil {
			t.Errorf("%s was not listed", key)
		}
	}
	if len(got) != len(want) {
		t.Errorf("listed %d records, want %d", len(got), len(want))
	}
	var primaries atomic.Int32
	cc.ForEachMaster(t.Context(), func(context.Context, *redis.Client) error { primaries.Add(1); return nil })
	if primaries.Load() < 2 {
		t.Fatalf("the cluster has %d primaries: the test needs several", primaries.Load())
	}
}
