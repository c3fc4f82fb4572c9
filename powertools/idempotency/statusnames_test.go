package idempotency_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// TestStatusNamesInTheDocs: the documentation names the statuses as the
// records hold them (INPROGRESS, COMPLETED, UNCERTAIN, as Powertools
// writes them, and as the operator's command prints them), never
// IN_PROGRESS or COMPLETE: the pages under docs/, the README, and the doc
// comments of the packages a user imports (internal packages and the
// benchmarks' module aside). The variable
// POWERTOOLS_IDEMPOTENCY_WAIT_FOR_IN_PROGRESS is a name of its own.
func TestStatusNamesInTheDocs(t *testing.T) {
	t.Parallel()
	for _, s := range []idempotency.Status{idempotency.StatusInProgress, idempotency.StatusComplete} {
		if !slices.Contains([]string{"INPROGRESS", "COMPLETED"}, string(s)) {
			t.Fatalf("the status %q: the test checks the docs against INPROGRESS and COMPLETED", s)
		}
	}
	wrong := regexp.MustCompile(`\bIN_PROGRESS\b|\bCOMPLETE\b`)
	root := testenv.RepoRoot()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch {
			case rel == ".":
			case strings.HasPrefix(d.Name(), "."), d.Name() == "internal", d.Name() == "testdata", rel == "bench":
				return filepath.SkipDir
			}
			return nil
		}
		doc := strings.HasSuffix(path, ".md") && (filepath.Dir(rel) == "." || filepath.Dir(rel) == "docs")
		code := strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go")
		if !doc && !code {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if wrong.MatchString(line) {
				t.Errorf("%s:%d names a status as no record holds it: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
