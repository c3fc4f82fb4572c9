package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// runtime is a Powertools for AWS Lambda runtime that the tests run
// scripts of testdata with.
type runtime struct {
	name   string
	compat idempotency.Compatibility
	ext    string // of its scripts: keys.py, keys.mjs
	// command returns the command that runs testdata/<script><ext>.
	command func(script string) *exec.Cmd
}

// installHint is how to get the runtimes.
const installHint = "install them with bench/powertools/install.sh"

// powertoolsPython returns Powertools Python, or skips (fails under CI)
// when .tools/bench-python is absent.
func powertoolsPython(t testing.TB) runtime {
	t.Helper()
	python := filepath.Join(testenv.RepoRoot(), ".tools", "bench-python", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		testenv.Unavailable(t, "Powertools Python is not installed (%s is absent): %s", python, installHint)
	}
	return runtime{
		name: "python", compat: idempotency.PowertoolsPython, ext: ".py",
		command: func(script string) *exec.Cmd {
			return exec.Command(python, filepath.Join("testdata", script+".py"))
		},
	}
}

// powertoolsTypeScript returns Powertools TypeScript, or skips (fails under
// CI) when .tools/bench-node or node is absent.
func powertoolsTypeScript(t testing.TB) runtime {
	t.Helper()
	modules := filepath.Join(testenv.RepoRoot(), ".tools", "bench-node", "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "@aws-lambda-powertools", "idempotency")); err != nil {
		testenv.Unavailable(t, "Powertools TypeScript is not installed (%s is absent): %s", modules, installHint)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Unavailable(t, "node is not on PATH: Powertools TypeScript cannot run")
	}
	return runtime{
		name: "typescript", compat: idempotency.PowertoolsTypeScript, ext: ".mjs",
		command: func(script string) *exec.Cmd {
			c := exec.Command(node, filepath.Join("testdata", script+".mjs"))
			// NODE_NO_WARNINGS: the AWS SDK warns of Node.js versions it
			// will stop supporting.
			c.Env = append(os.Environ(), "POWERTOOLS_NODE_MODULES="+modules, "NODE_NO_WARNINGS=1")
			return c
		},
	}
}

// runtimes returns both runtimes.
func runtimes(t testing.TB) []runtime {
	t.Helper()
	return []runtime{powertoolsPython(t), powertoolsTypeScript(t)}
}

// batch runs testdata/<script> once with every input as a JSON line on
// its stdin, and returns its JSON lines of output, one per input.
func batch[In, Out any](t *testing.T, rt runtime, script string, inputs []In) []Out {
	t.Helper()
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, e := range inputs {
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	cmd := rt.command(script)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", rt.name, script, err, stderr.Bytes())
	}
	var outs []Out
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var out Out
		if err := json.Unmarshal(sc.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: output line %d: %v", rt.name, script, len(outs)+1, err)
		}
		outs = append(outs, out)
	}
	if len(outs) != len(inputs) {
		t.Fatalf("%s %s: %d lines of output for %d inputs\n%s", rt.name, script, len(outs), len(inputs), stderr.Bytes())
	}
	return outs
}
