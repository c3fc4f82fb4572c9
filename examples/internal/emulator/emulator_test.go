package emulator

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

func startEcho(t *testing.T, timeoutSeconds int) (*Emulator, *Buffer) {
	t.Helper()
	rie, err := LocateRIE(testenv.RepoRoot())
	if err != nil {
		testenv.Unavailable(t, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bootstrap := filepath.Join(t.TempDir(), "bootstrap")
	if err := Build(ctx, "testdata/echo", bootstrap); err != nil {
		t.Fatal(err)
	}
	out := &Buffer{}
	e := StartTest(t, Config{
		RIE:       rie,
		Bootstrap: bootstrap,
		Env:       []string{"AWS_LAMBDA_FUNCTION_TIMEOUT=" + strconv.Itoa(timeoutSeconds)},
		Output:    out,
	})
	return e, out
}

func TestEmulatorRunsTheRuntimeLoop(t *testing.T) {
	t.Parallel()
	e, out := startEcho(t, 1)
	ctx := context.Background()

	start := time.Now()
	resp, err := e.Invoke(ctx, []byte(`{"say":"hello"}`))
	took := time.Since(start)
	if err != nil || resp.Status != 200 || string(resp.Body) != `"hello"` {
		t.Fatalf("Invoke = %d %s, %v; want 200 \"hello\"", resp.Status, resp.Body, err)
	}
	// The deadline the function sees is the invocation's start plus the
	// function timeout; the invocation started while Invoke ran, so the
	// deadline is within that span plus 1 s (and a millisecond of
	// rounding), however slow the machine.
	var deadlineMs int64
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	output, err := out.Await(wait, func(output string) bool {
		_, after, ok := strings.Cut(output, "deadline_ms=")
		return ok && strings.Contains(after, "\n")
	})
	if err != nil {
		t.Fatalf("the function printed no deadline_ms line: %v", err)
	}
	for line := range strings.Lines(output) {
		if v, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "deadline_ms="); ok {
			deadlineMs, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if d := time.UnixMilli(deadlineMs).Sub(start); d < time.Second-time.Millisecond || d > took+time.Second+time.Millisecond {
		t.Errorf("deadline %v after Invoke was called, which took %v; want the 1 s timeout after the invocation started", d, took)
	}

	resp, err = e.Invoke(ctx, []byte(`{"panic":true}`))
	if err != nil || resp.Status != 502 || !strings.Contains(string(resp.Body), "asked to panic") {
		t.Errorf("panicking Invoke = %d %s, %v; want 502 with the panic", resp.Status, resp.Body, err)
	}
	resp, err = e.Invoke(ctx, []byte(`{"sleep":"3s"}`))
	if err != nil || !strings.Contains(string(resp.Body), "Task timed out") {
		t.Errorf("slow Invoke = %d %s, %v; want a timeout", resp.Status, resp.Body, err)
	}
	// After a panic and a timeout the emulator starts the function again.
	resp, err = e.Invoke(ctx, []byte(`{"say":"again"}`))
	if err != nil || string(resp.Body) != `"again"` {
		t.Errorf("Invoke after a timeout = %d %s, %v; want \"again\"", resp.Status, resp.Body, err)
	}
}
