package apirecord

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// harness are the packages that only tests link: the test harness, and
// the in-memory store that users import in their unit tests.
var harness = []string{
	module + "/internal/testing/",
	module + "/powertools/idempotency/idempotencytest",
}

// TestWhatShipsLinksNoHarness checks that no package a deployed program
// links, the library's, the command's or an example function's, imports
// the test harness, directly or through another package: what ships and
// what tests are two places. The examples' own tools (examples/internal:
// the demo's driver, their tests' helpers) run beside the harness, and
// do not ship.
func TestWhatShipsLinksNoHarness(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Deps", "./...")
	cmd.Dir = testenv.RepoRoot()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	shipping := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if isHarness(p.ImportPath) || strings.HasPrefix(p.ImportPath, module+"/examples/internal/") {
			continue
		}
		shipping++
		for _, dep := range p.Deps {
			if isHarness(dep) {
				t.Errorf("%s links %s, which only tests may", p.ImportPath, dep)
			}
		}
	}
	if shipping == 0 {
		t.Fatal("no package found that ships")
	}
}

func isHarness(path string) bool {
	for _, h := range harness {
		if path == strings.TrimSuffix(h, "/") || strings.HasPrefix(path, h) {
			return true
		}
	}
	return false
}
