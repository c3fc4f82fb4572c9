package emulator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// TestDocsEmulatorCommands: every emulator that docs/testing.md starts
// has both addresses of its own, the invocations' and the runtime API's,
// as Start gives them: the runtime API's defaults to 127.0.0.1:9001, on
// which a second emulator does not start. The page starts two.
func TestDocsEmulatorCommands(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	emulators := 0
	for line := range strings.Lines(string(raw)) {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasSuffix(fields[0], "aws-lambda-rie") {
			continue
		}
		emulators++
		addrs := map[string]string{}
		for i, f := range fields[:len(fields)-1] {
			if f == "--runtime-interface-emulator-address" || f == "--runtime-api-address" {
				addrs[f] = fields[i+1]
			}
		}
		if len(addrs) != 2 {
			t.Errorf("docs/testing.md starts an emulator without both addresses: %s", strings.TrimSpace(line))
		}
		for flag, addr := range addrs {
			if other, ok := seen[addr]; ok {
				t.Errorf("docs/testing.md gives %s to two emulators (%s, %s)", addr, other, flag)
			}
			seen[addr] = flag
		}
	}
	if emulators < 2 {
		t.Errorf("docs/testing.md starts %d emulators, want the two it tells of", emulators)
	}
}
