package redis

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
	"github.com/redis/go-redis/v9"
)

// TestWaitReplicasOptions: the WAIT settings are checked when the store
// is made.
func TestWaitReplicasOptions(t *testing.T) {
	t.Parallel()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	for name, fn := range map[string]func(*Options){
		"negative":     func(o *Options) { o.WaitReplicas = -1 },
		"zero timeout": func(o *Options) { o.WaitReplicas, o.WaitTimeout = 1, 0 },
	} {
		if _, err := New(client, fn); !errors.As(err, new(*idempotency.ConfigError)) {
			t.Errorf("%s: New = %v, want a ConfigError", name, err)
		}
	}
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	defer ring.Close()
	if _, err := New(ring, func(o *Options) { o.WaitReplicas = 1 }); !errors.As(err, new(*idempotency.ConfigError)) {
		t.Errorf("New(Ring) with WaitReplicas = %v, want a ConfigError", err)
	}
}

// TestWaitReplicasWithoutReplicas: on servers that have no replica (the
// test Valkey, Redis and cluster), every step that writes, and a
// duplicate's read, fails with WaitReplicas 1: the WAIT is sent on the
// node that owns the key, and its short answer is taken as a failure.
func TestWaitReplicasWithoutReplicas(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			s := newStore(t, srv.client(t), func(o *Options) { o.WaitReplicas, o.WaitTimeout = 1, 20*time.Millisecond })
			now := time.Now()
			rec := &idempotency.Record{Key: "wait#1", Status: idempotency.StatusInProgress, LeaseToken: "a", Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute)}
			if _, err := s.Acquire(t.Context(), rec, now); !errors.Is(err, errNotReplicated) {
				t.Fatalf("Acquire = %v, want errNotReplicated", err)
			}
			// The record was written on the primary all the same: a
			// duplicate reads it, and waits for it as well.
			dup := *rec
			dup.LeaseToken = "b"
			if _, err := s.Acquire(t.Context(), &dup, now); !errors.Is(err, errNotReplicated) {
				t.Fatalf("duplicate Acquire = %v, want errNotReplicated", err)
			}
			if _, err := s.Get(t.Context(), rec.Key); !errors.Is(err, errNotReplicated) {
				t.Fatalf("Get = %v, want errNotReplicated", err)
			}
		})
	}
}

// TestWaitReplicasWithAReplica: a primary and a replica of their own,
// started here; the store with WaitReplicas 1 passes the conformance
// suite, and with WaitReplicas 2 (one replica too many) fails its
// writes.
func TestWaitReplicasWithAReplica(t *testing.T) {
	t.Parallel()
	server := valkeyServer(t)
	primary := startServer(t, server)
	replica := startServer(t, server, "--replicaof", "127.0.0.1", primary)
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + primary})
	t.Cleanup(func() { client.Close() })
	replicaClient := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + replica})
	t.Cleanup(func() { replicaClient.Close() })
	// The replica gives no signal when its link is up: ask until it is.
	for deadline := time.Now().Add(30 * time.Second); ; {
		info, err := replicaClient.Info(t.Context(), "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not connect: %v\n%s", err, info)
		}
		time.Sleep(50 * time.Millisecond)
	}

	s := newStore(t, client, func(o *Options) { o.WaitReplicas = 1 })
	idempotencytest.TestStore(t, func(*testing.T) idempotency.Store { return s })

	tooMany := newStore(t, client, func(o *Options) { o.WaitReplicas, o.WaitTimeout = 2, 20*time.Millisecond })
	now := time.Now()
	rec := &idempotency.Record{Key: "wait#2", Status: idempotency.StatusInProgress, LeaseToken: "a", Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute)}
	if _, err := tooMany.Acquire(t.Context(), rec, now); !errors.Is(err, errNotReplicated) {
		t.Fatalf("Acquire with WaitReplicas 2 and one replica = %v, want errNotReplicated", err)
	}
	// The replica has what the primary wrote.
	if n, err := replicaClient.Exists(context.Background(), tooMany.key(rec.Key)[0]).Result(); err != nil || n != 1 {
		t.Errorf("the replica has the record: %d, %v", n, err)
	}
}

// valkeyServer finds valkey-server as scripts/with-servers.sh does, or
// skips (fails under CI).
func valkeyServer(t *testing.T) string {
	t.Helper()
	if v := os.Getenv("VALKEY_SERVER"); v != "" {
		return v
	}
	if p := filepath.Join(testenv.RepoRoot(), ".tools", "bin", "valkey-server"); fileExists(p) {
		return p
	}
	if p, err := exec.LookPath("valkey-server"); err == nil {
		return p
	}
	testenv.Unavailable(t, "no valkey-server (VALKEY_SERVER, .tools/bin or PATH) to start a primary and its replica")
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// startServer starts a server in memory on a free port, stopped when the
// test ends, and returns the port once it answers.
func startServer(t *testing.T, server string, args ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command(server, append([]string{"--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--dir", t.TempDir()}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "Ready to accept connections") {
				close(ready)
				break
			}
		}
		for sc.Scan() {
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s on port %s did not start", server, port)
	}
	return port
}
