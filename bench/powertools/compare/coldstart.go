package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// coldStart is the payments example's cold start under the Lambda
// Runtime Interface Emulator: the init durations the emulator reports (its
// "INIT REPORT(durationMs: ...)" line, from the exec of the binary to its
// first call for work), and the binary's size as template.yaml builds it.
type coldStart struct {
	inits       []float64 // ms, sorted
	sizeAMD64   int64
	sizeARM64   int64
	firstInvoke []float64 // ms from sending the first event to its answer, sorted
}

// measureColdStart builds examples/payments as `make build` does and starts
// it runs times, each in a fresh emulator.
func measureColdStart(root, tmp string, runs int) (coldStart, error) {
	var cs coldStart
	build := func(arch, out string) (int64, error) {
		cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", out, "./examples/payments")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("go build payments for %s: %w\n%s", arch, err, out)
		}
		fi, err := os.Stat(out)
		if err != nil {
			return 0, err
		}
		return fi.Size(), nil
	}
	bin := filepath.Join(tmp, "payments-amd64")
	var err error
	if cs.sizeAMD64, err = build("amd64", bin); err != nil {
		return cs, err
	}
	if cs.sizeARM64, err = build("arm64", filepath.Join(tmp, "payments-arm64")); err != nil {
		return cs, err
	}
	rie := filepath.Join(root, ".tools/bin/aws-lambda-rie")
	for range runs {
		initMs, invokeMs, err := startOnce(rie, bin)
		if err != nil {
			return cs, err
		}
		cs.inits = append(cs.inits, initMs)
		cs.firstInvoke = append(cs.firstInvoke, invokeMs)
	}
	slices.Sort(cs.inits)
	slices.Sort(cs.firstInvoke)
	return cs, nil
}

var initReport = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

// startOnce runs the binary under a new emulator, sends one event (a
// payment without an order id, answered 400 without a request to
// DynamoDB or the provider), and returns the init duration the emulator
// logged and the time the first invocation took, end to end.
func startOnce(rie, bin string) (initMs, invokeMs float64, err error) {
	ports := make([]int, 2)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, err
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", addr,
		"--runtime-api-address", "127.0.0.1:"+strconv.Itoa(ports[1]), bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
		"AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:9", "AWS_LAMBDA_FUNCTION_NAME=payments",
		"POWERTOOLS_IDEMPOTENCY_TABLE=payments-idempotency", "PAYMENT_PROVIDER_URL=http://127.0.0.1:9"}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("emulator not listening on %s: %s", addr, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := strings.NewReader(`{"version":"2.0","routeKey":"POST /payments","rawPath":"/payments","body":"{}"}`)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/2015-03-31/functions/function/invocations", body)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	resp.Body.Close()
	invokeMs = float64(time.Since(start).Microseconds()) / 1000
	for range 100 {
		if m := initReport.FindStringSubmatch(out.String()); m != nil {
			initMs, err = strconv.ParseFloat(m[1], 64)
			return initMs, invokeMs, err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0, 0, fmt.Errorf("no INIT REPORT in the emulator's output: %s", out.String())
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (cs coldStart) render() string {
	pct := func(v []float64, p float64) float64 { return v[int(p*float64(len(v)-1))] }
	var b strings.Builder
	fmt.Fprintf(&b, "\n### Cold start of the payments example\n\n")
	fmt.Fprintf(&b, "examples/payments built as `make build` and template.yaml build it (`CGO_ENABLED=0 GOOS=linux go build -tags\n")
	fmt.Fprintf(&b, "lambda.norpc`, no other flags), started %d times, each in a fresh Runtime Interface Emulator. Init is the\n", len(cs.inits))
	fmt.Fprintf(&b, "emulator's own `INIT REPORT` duration (from starting the binary to its first request for work: the AWS SDK's\n")
	fmt.Fprintf(&b, "configuration, the store, and the middleware's options and JMESPath expressions compiled); the first\n")
	fmt.Fprintf(&b, "invocation is measured end to end by the caller, with an event answered without a network request.\n\n")
	fmt.Fprintf(&b, "| measure | min | median | max |\n|---|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| init duration (ms) | %.1f | %.1f | %.1f |\n", cs.inits[0], pct(cs.inits, 0.5), cs.inits[len(cs.inits)-1])
	fmt.Fprintf(&b, "| first invocation, end to end (ms) | %.1f | %.1f | %.1f |\n\n", cs.firstInvoke[0], pct(cs.firstInvoke, 0.5), cs.firstInvoke[len(cs.firstInvoke)-1])
	fmt.Fprintf(&b, "Binary size: %.1f MB (linux/amd64, measured above), %.1f MB (linux/arm64, as template.yaml deploys it).\n",
		float64(cs.sizeAMD64)/1e6, float64(cs.sizeARM64)/1e6)
	fmt.Fprintf(&b, "The emulator runs on this machine, not in a Lambda sandbox: the figures leave out the sandbox's own start and\n")
	fmt.Fprintf(&b, "the download of the code, which Lambda adds to every cold start whatever the language.\n")
	return b.String()
}
