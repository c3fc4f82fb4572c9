package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/examples/internal/emulator"
	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// TestGettingStartedInAModule follows docs/getting-started.md as a user
// does, in a module of their own that reaches this repository only through
// the guide's replace directive: its shell commands as shown, and this
// folder's files, which another test keeps equal to the guide's.
// Its emulator part runs the built function against moto, as step 3 does.
func TestGettingStartedInAModule(t *testing.T) {
	t.Parallel()
	guide := read(t, filepath.Join(testenv.RepoRoot(), "docs", "getting-started.md"))
	dir := t.TempDir()
	sh(t, dir, strings.ReplaceAll(block(t, guide, "go mod init "), "/path/to/lambda", testenv.RepoRoot()))
	for _, name := range []string{"main.go", "main_test.go", filepath.Join("createtable", "main.go")} {
		write(t, filepath.Join(dir, name), read(t, name))
	}
	sh(t, dir, block(t, guide, "go mod tidy\n"))
	sh(t, dir, block(t, guide, "go test ./...\n"))

	t.Run("emulator", func(t *testing.T) {
		rie, err := emulator.LocateRIE(testenv.RepoRoot())
		if err != nil {
			testenv.Unavailable(t, "%v", err)
		}
		moto := testenv.Endpoint(t, testenv.MotoEnv)

		// fulfil with the log line the guide adds, so that the output
		// shows when it runs.
		mainGo := read(t, filepath.Join(dir, "main.go"))
		logLine := block(t, guide, "\tlog.Printf(")
		edited := strings.Replace(mainGo, "\t\"context\"\n", "\t\"context\"\n\t\"log\"\n", 1)
		edited = strings.Replace(edited, "(Receipt, error) {\n", "(Receipt, error) {\n"+logLine, 1)
		if strings.Count(edited, "\n") != strings.Count(mainGo, "\n")+2 {
			t.Fatalf("main.go has no place for the guide's log line:\n%s", mainGo)
		}
		write(t, filepath.Join(dir, "main.go"), edited)

		// The second terminal's commands, with moto's address and a table
		// of this test's own; the last one, the emulator, is started below.
		script := block(t, guide, "export ")
		script = strings.ReplaceAll(script, "http://127.0.0.1:8000", moto)
		script = strings.ReplaceAll(script, "orders-idempotency", fmt.Sprintf("getting-started-%d", time.Now().UnixNano()))
		script = script[:strings.LastIndex(strings.TrimSuffix(script, "\n"), "\n")+1]
		if !strings.HasPrefix(script, "export ") || !strings.Contains(script, "go run ./createtable\n") {
			t.Fatalf("the guide's second terminal is not `export`, `go run ./createtable`, `go build`, the emulator:\n%s", script)
		}
		sh(t, dir, script)
		exports := strings.Fields(strings.ReplaceAll(script[len("export "):strings.Index(script, "\ngo ")], "\\\n", ""))

		out := &emulator.Buffer{}
		em := emulator.StartTest(t, emulator.Config{RIE: rie, Bootstrap: filepath.Join(dir, "bootstrap"), Env: exports, Output: out})
		var got []string
		for _, event := range []string{`{"order_id":"o-1","amount":100}`, `{"order_id":"o-1","amount":100}`, `{"order_id":"o-1","amount":999}`} {
			resp, err := em.Invoke(t.Context(), []byte(event))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(resp.Body))
		}
		want := `{"order_id":"o-1","status":"fulfilled"}`
		if got[0] != want || got[1] != want || !strings.Contains(got[2], `"errorType":"PayloadConflictError"`) {
			t.Errorf("responses:\n%s\nwant %s twice, then a PayloadConflictError", strings.Join(got, "\n"), want)
		}
		if n := strings.Count(out.String(), "fulfil: order o-1\n"); n != 1 {
			t.Errorf("fulfil logged %d times, want once (the second event is a replay)", n)
		}
	})
}

// block returns the guide's fenced block that begins with start.
func block(t *testing.T, guide, start string) string {
	t.Helper()
	for rest := guide; ; {
		i := strings.Index(rest, "```")
		if i < 0 {
			t.Fatalf("docs/getting-started.md has no block beginning with %q", start)
		}
		rest = rest[i:]
		body, tail, _ := strings.Cut(rest[strings.Index(rest, "\n")+1:], "```\n")
		if strings.HasPrefix(body, start) {
			return body
		}
		rest = tail
	}
}

// sh runs script in dir, stopping at the first command that fails. The
// module needs what this repository's build needs, which is in the module
// cache by now: no network.
func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-e", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("in a module of its own:\n%s%v\n%s", script, err, out.String())
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
