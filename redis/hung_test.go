package redis

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// privateValkey starts a valkey-server of the test's own, on a Unix
// socket, and returns its process and its URL. It is for the tests that
// stop a server: the servers of scripts/with-servers.sh are shared.
func privateValkey(t *testing.T) (*os.Process, string) {
	t.Helper()
	bin := os.Getenv("VALKEY_SERVER")
	if bin == "" {
		bin = filepath.Join(testenv.RepoRoot(), ".tools", "bin", "valkey-server")
	}
	if _, err := os.Stat(bin); err != nil {
		if bin, err = exec.LookPath("valkey-server"); err != nil {
			testenv.Unavailable(t, "no valkey-server (VALKEY_SERVER, .tools/bin or PATH)")
		}
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "valkey.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--dir", dir,
		"--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	ping := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	defer ping.Close()
	// The server process gives no signal when it is ready: ask until it
	// answers.
	for deadline := time.Now().Add(10 * time.Second); ping.Ping(t.Context()).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the private valkey-server did not answer within 10 s")
		}
	}
	return cmd.Process, "unix://" + sock
}

// TestHungServer stops the server (SIGSTOP: the connection stays open and
// nothing answers, as when a node hangs) before an invocation, whose
// deadline is 3 s away. The invocation is answered with a
// *PersistenceError by the deadline less the margin kept to answer, not
// held until Lambda ends it as timed out (the field's case: 5 s of a 5 s
// deadline). The client is ClientFromEnv's, as a function makes it.
func TestHungServer(t *testing.T) {
	proc, url := privateValkey(t)
	t.Setenv(URLEnv, url)
	client, err := ClientFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	s, err := New(client)
	if err != nil {
		t.Fatal(err)
	}
	h := idempotency.Wrap(s, echo, idempotency.WithEventKey("id"), idempotency.WithKeyPrefix("hung"), quiet)
	// A first invocation opens the connection and loads the script.
	if _, err := h.Invoke(t.Context(), []byte(`{"id":"before"}`)); err != nil {
		t.Fatal(err)
	}

	if err := proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer proc.Signal(syscall.SIGCONT)
	const timeout = 3 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	start := time.Now()
	_, err = h.Invoke(ctx, []byte(`{"id":"during"}`))
	took := time.Since(start)

	if _, ok := errors.AsType[*idempotency.PersistenceError](err); !ok {
		t.Fatalf("invocation: %v, want a *PersistenceError", err)
	}
	// The answer comes at the deadline less the margin; a loaded machine
	// may add a little, never the margin.
	if want := timeout - answerMargin; took < want-50*time.Millisecond || took > want+answerMargin/2 {
		t.Errorf("answered after %v, want about %v (deadline %v less the margin %v)", took, want, timeout, answerMargin)
	}
	t.Logf("answered after %v: %v", took, err)
}
