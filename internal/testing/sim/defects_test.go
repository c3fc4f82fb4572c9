package sim

import (
	"cmp"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// defectSeeds is the seed budget within which each defect must be
// caught: the first failing seed of each is far below it (see
// docs/simulation.md).
const defectSeeds = 3000

// TestDefectsCaught builds the simulator against each deliberate defect
// (Defects) and checks that it reports a violation within
// defectSeeds seeds; the library is never built with the defect.
func TestDefectsCaught(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the simulator once per defect")
	}
	root := testenv.RepoRoot()
	for _, d := range Defects {
		t.Run(d.Name, func(t *testing.T) {
			if d.File == "" {
				caughtInProcess(t, d)
				return
			}
			src, err := os.ReadFile(filepath.Join(root, d.File))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(src), d.Old); n != 1 {
				t.Fatalf("%s holds %q %d times, want once: the defect no longer applies; update defects.go", d.File, d.Old, n)
			}
			dir := t.TempDir()
			mutated := filepath.Join(dir, filepath.Base(d.File))
			if err := os.WriteFile(mutated, []byte(strings.Replace(string(src), d.Old, d.New, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, d.File): mutated}})
			overlayFile := filepath.Join(dir, "overlay.json")
			if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(dir, "simulate")
			build := exec.Command("go", "build", "-overlay", overlayFile, "-o", bin, "./internal/testing/sim/cmd/simulate")
			build.Dir = root
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build with the defect: %v\n%s", err, out)
			}
			budget := cmp.Or(d.Seeds, defectSeeds)
			run := exec.Command(bin, "-seeds", strconv.Itoa(budget), "-store", string(d.Store), "-no-shrink", "-stop",
				"-redis-wait", strconv.Itoa(d.Options.RedisWait))
			out, err := run.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("the simulator did not catch %s in %d seeds (%v):\n%s", d.Name, budget, err, out)
			}
			if !strings.Contains(string(out), d.Invariant) {
				t.Errorf("caught, but not as %q:\n%s", d.Invariant, out)
			}
			t.Logf("caught: %s", firstLine(string(out), "seed "))
		})
	}
}

// caughtInProcess runs a deployment defect's seeds here: the defect must
// break its invariant (within a documented limit, since it is one), and
// the same seeds without it must break nothing.
func caughtInProcess(t *testing.T, d Defect) {
	first := uint64(0)
	for seed := uint64(1); seed <= defectSeeds && first == 0; seed++ {
		for _, v := range Run(seed, d.Store, d.Options).Violations {
			if v.Invariant == d.Invariant {
				first = seed
			}
		}
	}
	if first == 0 {
		t.Fatalf("no %s violation in %d seeds", d.Invariant, defectSeeds)
	}
	fixed := d.Options
	fixed.RedisWait = 1
	for seed := uint64(1); seed <= first; seed++ {
		r := Run(seed, d.Store, fixed)
		if n := len(r.Violations) - len(excusedBy(r, limitReconcileLives)); n != 0 {
			t.Errorf("seed %d with WaitReplicas 1: %v, want none", seed, r.Violations)
		}
	}
	t.Logf("caught at seed %d; none in seeds 1 to %d with WAIT", first, first)
}

func excusedBy(r Result, limit string) []Violation {
	var out []Violation
	for _, v := range r.Violations {
		if v.Limit == limit {
			out = append(out, v)
		}
	}
	return out
}

func firstLine(s, prefix string) string {
	for line := range strings.Lines(s) {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, prefix) {
			return t
		}
	}
	return ""
}
