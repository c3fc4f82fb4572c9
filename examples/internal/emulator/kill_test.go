package emulator

import (
	"errors"
	"net"
	"os/exec"
	"syscall"
	"testing"
)

func TestKillFindsTheProcessByItsExecutable(t *testing.T) {
	t.Parallel()
	// A copy of the echo function: its own path, as a crash test has. The
	// build itself is removed at once, as a package's test binary removes
	// its shared one after its tests.
	echo := &Binary{Dir: "testdata/echo"}
	path := echo.Copy(t)
	echo.Remove()
	// A runtime API that never answers keeps the function waiting for its
	// first invocation, alive until killed.
	api, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	cmd := exec.Command(path)
	cmd.Env = []string{"AWS_LAMBDA_RUNTIME_API=" + api.Addr().String()}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	if n := Kill(path); n != 1 {
		t.Fatalf("Kill = %d, want 1", n)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("Wait = %v, want killed by SIGKILL", err)
	}
}
