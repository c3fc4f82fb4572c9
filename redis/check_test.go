package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/redismode"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// firstInvocations invokes a handler on s n times, each with a new key,
// and returns their errors; it fails the test if the handler ran while
// the store refused.
func firstInvocations(t *testing.T, s *Store, n int) []error {
	t.Helper()
	var ran atomic.Int32
	h, err := idempotency.New(s, func(_ context.Context, e event) (string, error) {
		ran.Add(1)
		return "done " + e.ID, nil
	}, idempotency.WithEventKey("id"), idempotency.WithKeyPrefix("check"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, n)
	for i := range errs {
		payload, _ := json.Marshal(event{ID: fmt.Sprint(i)})
		_, errs[i] = h.Invoke(t.Context(), payload)
	}
	if _, refused := errs[0].(*idempotency.ConfigError); refused && ran.Load() > 0 {
		t.Errorf("the handler ran %d times on a store that refused", ran.Load())
	}
	return errs
}

// wantRefused fails the test unless err is a *ConfigError, itself and
// not wrapped in another error, for name, whose message holds each of
// says.
func wantRefused(t *testing.T, err error, name string, says ...string) {
	t.Helper()
	ce, ok := err.(*idempotency.ConfigError)
	if !ok || ce.Name != name {
		t.Fatalf("%v (%T), want a *ConfigError for %s", err, err, name)
	}
	for _, s := range says {
		if !strings.Contains(ce.Err.Error(), s) {
			t.Errorf("the error says %q; want it to say %q", ce.Err, s)
		}
	}
}

// noKeys fails the test if the server holds a key under prefix.
func noKeys(t *testing.T, admin redis.UniversalClient, prefix string) {
	t.Helper()
	forEachNode(t, admin, func(c *redis.Client) error {
		keys, err := c.Keys(context.Background(), globEscape(prefix)+"*").Result()
		if err == nil && len(keys) > 0 {
			err = fmt.Errorf("keys were written under the prefix of a store that refused: %v", keys)
		}
		return err
	})
}

// TestWrongClientRefused: New sends nothing; the first invocation asks
// the server, with one command, whether the client fits it, and a client
// of the wrong kind gets a *ConfigError whose message names the
// constructor to use instead, before any record is written; the next
// invocation asks again, and a client that fits is not asked again. The
// case from the
// field: REDIS_URL names a node of a cluster, and ClientFromEnv's
// *redis.Client then reached that node's keys only, the others failing
// with MOVED on some invocations.
func TestWrongClientRefused(t *testing.T) {
	cluster := servers[2].addrs(t)[0]
	standalone := servers[0].addrs(t)[0]
	admin := map[string]redis.UniversalClient{cluster: servers[2].client(t), standalone: servers[0].client(t)}
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
			prefix := testPrefix(t)
			s, err := New(client, func(o *Options) { o.KeyPrefix = prefix })
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			sent.want(t, "New", map[string]int{})
			errs := firstInvocations(t, s, 2)
			if c.wantName == "" {
				if err := errors.Join(errs...); err != nil {
					t.Fatalf("the invocations: %v", err)
				}
				if got := sent.reset(); got["hello"] != 1 || got["eval"] < 1 {
					t.Errorf("two invocations sent %v, want HELLO once and EVAL of the check", got)
				}
				firstInvocations(t, s, 1)
				if got := sent.reset(); got["hello"] != 0 || got["eval"] != 0 {
					t.Errorf("an invocation after the check sent %v, want no HELLO nor EVAL", got)
				}
				return
			}
			// The message is what the person deploying reads: it must
			// say what to do.
			for _, err := range errs {
				wantRefused(t, err, "redis.New client", " "+c.wantName+" ", URLEnv)
			}
			sent.want(t, "two refused invocations", map[string]int{"hello": 2})
			noKeys(t, admin[c.url], prefix)
		})
	}
}

func fromEnv[C redis.UniversalClient](f func() (C, error)) func() (redis.UniversalClient, error) {
	return func() (redis.UniversalClient, error) { return f() }
}

// TestUnreachable: New on a server that cannot be reached succeeds, since
// it sends nothing; the first invocation fails with the network's error,
// within its deadline, and is not refused as misconfigured: the next one
// asks again.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialerRetries: 1})
	defer client.Close()
	s, err := New(client)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	dials := &dialCounter{}
	client.AddHook(dials)
	for i := range 2 {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		start := time.Now()
		_, err := s.Acquire(ctx, &idempotency.Record{Key: "k#1", Status: idempotency.StatusInProgress, Expiry: start.Add(time.Hour), LeaseEnd: start.Add(time.Minute)}, start)
		cancel()
		if err == nil {
			t.Fatal("Acquire on a closed port succeeded")
		}
		if _, ok := errors.AsType[*idempotency.ConfigError](err); ok {
			t.Errorf("Acquire %d: %v, want the network's error, not a *ConfigError", i, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Acquire %d took %v, past its deadline", i, d)
		}
	}
	if n := dials.n.Load(); n < 2 {
		t.Errorf("%d dials for two Acquires: the second did not ask again", n)
	}
}

// dialCounter is a hook that counts the client's dials.
type dialCounter struct{ n atomic.Int32 }

func (d *dialCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		d.n.Add(1)
		return next(ctx, network, addr)
	}
}
func (*dialCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (*dialCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// aclCases are ACL users that lack one thing the store needs, by what
// they lack: every rule of aclRules but one, or keys that do not fit the
// prefix. says is what the refusal names.
var aclCases = []struct {
	name string
	keys func(prefix string) []string // the key rules; nil: ~prefix*
	drop string                       // the rule of aclRules left out
	wait bool                         // with WaitReplicas
	says string
}{
	{name: "without EVALSHA", drop: "+evalsha", says: "EVALSHA"},
	{name: "without EVAL", drop: "+eval", says: "NOPERM"},
	{name: "without EXISTS", drop: "+exists", says: "EXISTS"},
	{name: "without HMGET", drop: "+hmget", says: "HMGET"},
	{name: "without HGET", drop: "+hget", says: "HGET"},
	{name: "without HGETALL", drop: "+hgetall", says: "HGETALL"},
	{name: "without HSET", drop: "+hset", says: "HSET"},
	{name: "without DEL", drop: "+del", says: "DEL"},
	{name: "without PEXPIRE", drop: "+pexpire", says: "PEXPIRE"},
	{name: "without WAIT", wait: true, says: "WAIT"},
	{name: "other keys", keys: func(string) []string { return []string{"~elsewhere:*"} }, says: "NOPERM"},
	{name: "read-only keys", keys: func(p string) []string { return []string{"%R~" + p + "*"} }, says: "NOPERM"},
}

// TestACLRefused: an ACL user that lacks a command the store sends, or
// its keys, is refused on the first invocation with a *ConfigError naming
// what it lacks, before any record is written; without the check, a user
// without PEXPIRE left a record without a TTL, one without HGET ran the
// handler and could not complete, and one without HGETALL failed every
// duplicate.
func TestACLRefused(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			admin := srv.client(t)
			for _, c := range aclCases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					prefix := testPrefix(t)
					keys := []string{"~" + globEscape(prefix) + "*"}
					if c.keys != nil {
						keys = c.keys(prefix)
					}
					rules := slices.DeleteFunc(slices.Clone(aclRules), func(r string) bool { return r == c.drop })
					user := newACLUser(t, srv, "on", append(keys, rules...)...)
					s, err := New(srv.userClient(t, user, "s3cret"), func(o *Options) {
						o.KeyPrefix = prefix
						if c.wait {
							o.WaitReplicas = 1
						}
					})
					if err != nil {
						t.Fatal(err)
					}
					for _, err := range firstInvocations(t, s, 2) {
						wantRefused(t, err, "redis ACL", c.says)
					}
					noKeys(t, admin, prefix)
				})
			}
		})
	}
}

// TestCredentialsRefused: a password the server refuses, or a user it
// has disabled, is refused on the first invocation with a *ConfigError,
// before any record is written.
func TestCredentialsRefused(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			admin := srv.client(t)
			for _, c := range []struct {
				name     string
				state    string // the user's state: on or off
				password string
			}{
				{"wrong password", "on", "wrong"},
				{"disabled user", "off", "s3cret"},
			} {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					prefix := testPrefix(t)
					user := newACLUser(t, srv, c.state, append([]string{"~" + globEscape(prefix) + "*"}, aclRules...)...)
					s, err := New(srv.userClient(t, user, c.password), func(o *Options) { o.KeyPrefix = prefix })
					if err != nil {
						t.Fatal(err)
					}
					for _, err := range firstInvocations(t, s, 2) {
						wantRefused(t, err, "redis.New client", "WRONGPASS", URLEnv)
					}
					noKeys(t, admin, prefix)
				})
			}
		})
	}
}

// TestScanEveryPrimary: what an operator's list reads on a cluster. A
// *redis.Client on one node, which saw that node's records only (48 keys
// of 104, and exit status 0), is refused by its first Scan; a client
// made for the mode that redismode.Of reports, as cmd/idempotency makes
// it from a URL, scans every primary and reads every record.
func TestScanEveryPrimary(t *testing.T) {
	t.Parallel()
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
	wrong, err := New(one, func(o *Options) { *o = s.opts })
	if err != nil {
		t.Fatal(err)
	}
	for page, err := range wrong.Scan(t.Context(), "") {
		wantRefused(t, err, "redis.New client", "ClusterClientFromEnv")
		if page != nil {
			t.Errorf("the refused scan read a page: %+v", page)
		}
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
