// Package emulator runs a Lambda function binary under the AWS Lambda
// Runtime Interface Emulator (RIE), for the examples' end-to-end tests and
// demo. The emulator runs the real runtime loop of aws-lambda-go: the
// invocation deadline, the function timeout and a panicking handler behave
// as on Lambda.
//
// An emulator runs one invocation at a time; run two to send two at once.
package emulator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Config says what to run.
type Config struct {
	// RIE is the path of the aws-lambda-rie binary.
	RIE string
	// Bootstrap is the function binary (see [Build]).
	Bootstrap string
	// Env is the function's environment, on top of PATH and HOME. The
	// emulator reads AWS_LAMBDA_FUNCTION_TIMEOUT (seconds, default 300)
	// from it too.
	Env []string
	// Output receives the emulator's and the function's output (nil:
	// discarded).
	Output io.Writer
}

// Emulator is a running emulator.
type Emulator struct {
	url  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// Start starts the emulator on free loopback ports and waits until it
// accepts invocations. The function itself starts on the first invocation.
// Close stops both.
func Start(ctx context.Context, cfg Config) (*Emulator, error) {
	// A port found free can be taken by another process before the
	// emulator binds it, which makes the emulator exit: try other ports.
	var err error
	for range 3 {
		var e *Emulator
		if e, err = start(ctx, cfg); !errors.Is(err, errExited) {
			return e, err
		}
	}
	return nil, err
}

// errExited is an emulator that exited before it listened.
var errExited = errors.New("exited before listening")

func start(ctx context.Context, cfg Config) (*Emulator, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	runtimeAPI := "127.0.0.1:" + strconv.Itoa(ports[1])
	cmd := exec.Command(cfg.RIE,
		"--runtime-interface-emulator-address", addr,
		"--runtime-api-address", runtimeAPI,
		cfg.Bootstrap)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, cfg.Env...)
	cmd.Stdout, cmd.Stderr = cfg.Output, cfg.Output
	// A process group of its own, so that Close stops the function's
	// process with the emulator's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("emulator: start %s: %w", cfg.RIE, err)
	}
	e := &Emulator{url: "http://" + addr + "/2015-03-31/functions/function/invocations", cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(e.done) }()

	// The emulator opens its two ports independently: an invocation that
	// arrives before the runtime API listens starts a function that cannot
	// reach it, and fails.
	for _, a := range []string{addr, runtimeAPI} {
		if err := e.waitListening(ctx, a); err != nil {
			e.Close()
			return nil, fmt.Errorf("emulator: %s: %w", cfg.RIE, err)
		}
	}
	return e, nil
}

// waitListening waits until addr accepts connections.
func (e *Emulator) waitListening(ctx context.Context, addr string) error {
	for {
		conn, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-e.done:
			return fmt.Errorf("%w on %s", errExited, addr)
		case <-ctx.Done():
			return fmt.Errorf("not listening on %s: %w", addr, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Response is what an invocation returned.
type Response struct {
	// Status is the emulator's HTTP status: 200 for a response or a
	// function error alike.
	Status int
	// Body is the function's response, or its error as Lambda reports it
	// ({"errorMessage", "errorType"}), or the emulator's timeout message.
	Body []byte
}

// Invoke sends payload to the function and waits for the outcome.
func (e *Emulator) Invoke(ctx context.Context, payload []byte) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(payload))
	if err != nil {
		return Response{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("emulator: invoke: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, fmt.Errorf("emulator: read the response: %w", err)
	}
	return Response{Status: resp.StatusCode, Body: body}, nil
}

// Close stops the emulator and the function, and waits for them to exit.
func (e *Emulator) Close() error {
	select {
	case <-e.done:
		return nil
	default:
	}
	// SIGTERM first: the emulator passes it on to the function. SIGKILL
	// the group if that is not enough.
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-e.done:
	case <-time.After(3 * time.Second):
		_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
		<-e.done
	}
	// Whatever of the group outlived the emulator.
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	return nil
}

// Build compiles the main package in dir into output as Lambda runs it on
// a provided.al2023 runtime: Linux, static, without the RPC mode, for the
// host's architecture so that the emulator can run it.
func Build(ctx context.Context, dir, output string, tags ...string) error {
	tagList := "lambda.norpc"
	for _, t := range tags {
		tagList += "," + t
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", tagList, "-o", output, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=linux", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("emulator: go build in %s: %w\n%s", dir, err, out)
	}
	return nil
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("emulator: find a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// LocateRIE returns the emulator binary: $AWS_LAMBDA_RIE if set, else the
// one `make tools` installs at .tools/bin/aws-lambda-rie in repoRoot.
func LocateRIE(repoRoot string) (string, error) {
	path := os.Getenv("AWS_LAMBDA_RIE")
	if path == "" {
		path = filepath.Join(repoRoot, ".tools", "bin", "aws-lambda-rie")
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("emulator: no Runtime Interface Emulator at %s (make tools installs it)", path)
	}
	return path, nil
}
