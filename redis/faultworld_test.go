package redis

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/internal/testing/faultworld"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// The middleware on the store, through internal/testing/faultproxy's RESP proxy,
// with go-redis as it is by default: each fault the network can produce,
// on each command the store sends, must leave every effect run once.
// internal/testing/faultworld holds the world and the tests; what is Redis's is
// here.

// attempts is how often go-redis sends a command whose connection broke:
// once, and 3 retries (Options.MaxRetries for a Client,
// ClusterOptions.MaxRedirects for a ClusterClient, both 3 by default).
const attempts = 4

// faultWorld is a fault world on one proxy per server node, with a store
// reaching the server directly, with the same keys, for the checks.
type faultWorld struct {
	*faultworld.World
	store  *Store // through the proxies
	direct *Store
	admin  redis.UniversalClient
}

func newFaultWorld(t *testing.T, srv server) *faultWorld {
	t.Helper()
	addrs := srv.addrs(t)
	ps := make(map[string]*faultproxy.Proxy, len(addrs))
	var proxies faultworld.Proxies
	for _, addr := range addrs {
		p, err := faultproxy.NewRESP(addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		ps[addr] = p
		proxies = append(proxies, p)
	}
	// The client dials the servers' own addresses, which a cluster's nodes
	// announce, and reaches the proxies in their stead.
	var d net.Dialer
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		p, ok := ps[addr]
		if !ok {
			return nil, fmt.Errorf("no proxy for %s", addr)
		}
		return d.DialContext(ctx, network, p.Addr())
	}
	// go-redis as it is by default, but for a backoff between attempts of
	// 1 to 2 ms instead of up to 512 ms, so that the tests run in seconds,
	// and timeouts that a loaded machine does not reach (a timed-out
	// command is retried, which would break more commands than a test
	// means to).
	const timeout = 30 * time.Second
	var client redis.UniversalClient
	if srv.cluster {
		client = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Dialer: dial,
			MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 2 * time.Millisecond,
			DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
	} else {
		client = redis.NewClient(&redis.Options{Addr: addrs[0], Dialer: dial,
			MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 2 * time.Millisecond,
			DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
	}
	t.Cleanup(func() { client.Close() })
	prefix := testPrefix(t)
	store, err := New(client, func(o *Options) { o.KeyPrefix = prefix })
	if err != nil {
		t.Fatal(err)
	}
	admin := srv.client(t)
	direct, _ := New(admin, func(o *Options) { o.KeyPrefix = prefix })
	loadScripts(t, admin)
	return &faultWorld{World: faultworld.New(t, store, direct, proxies...), store: store, direct: direct, admin: admin}
}

// wrap is the middleware on the proxied store. An UNCERTAIN order is
// reconciled by asking the provider, which says the charge did not
// happen: the handler then runs.
func (w *faultWorld) wrap() *idempotency.Handler {
	return w.Wrap(idempotency.WithReconcile(func(context.Context, string) (faultworld.Reply, bool, error) {
		return faultworld.Reply{}, false, nil
	}))
}

// flushScripts makes every node forget the store's scripts, so that the
// next command of each is EVALSHA, NOSCRIPT, then EVAL.
func (w *faultWorld) flushScripts() {
	w.T.Helper()
	var err error
	if cc, ok := w.admin.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(context.Background(), func(ctx context.Context, n *redis.Client) error { return n.ScriptFlush(ctx).Err() })
	} else {
		err = w.admin.ScriptFlush(context.Background()).Err()
	}
	if err != nil {
		w.T.Fatal(err)
	}
}
