package docstest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// localSAM are the sam commands that need no AWS account, nor Docker:
// the functions are built by make (BuildMethod: makefile).
var localSAM = []string{"validate", "build"}

// TestSAMCommands runs the sam commands of the docs as they show them, in
// order, up to the first that needs an AWS account (sam deploy), in a
// scratch folder set up as the doc's reader has it:
//
//   - docs/deploying.md's, in a copy of the repository: template.yaml,
//     samconfig.toml, and the Makefile's build-<Function> targets;
//   - docs/getting-started.md's, in the guide's module: its go mod
//     commands, examples/minimal's files (which the example's own test
//     keeps equal to the guide's), go mod tidy.
//
// The SAM CLI is $DOCS_SAM_CLI. `make sam-check`, a step of `make test`,
// installs it pinned (scripts/tools.sh sam) and runs this test; a plain
// go test skips it.
func TestSAMCommands(t *testing.T) {
	t.Parallel()
	sam := os.Getenv("DOCS_SAM_CLI")
	if sam == "" {
		t.Skip("DOCS_SAM_CLI is not set: `make sam-check` runs this test with the pinned SAM CLI")
	}
	if !filepath.IsAbs(sam) {
		t.Fatalf("DOCS_SAM_CLI=%s: want an absolute path", sam)
	}
	setups := map[string]func(*testing.T) string{
		"docs/deploying.md":       repositoryCopy,
		"docs/getting-started.md": guideModule,
	}
	env := []string{
		"PATH=" + filepath.Dir(sam) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"SAM_CLI_TELEMETRY=0",
		"GOWORK=off",
		// sam build copies a function's code to a scratch folder first
		// (unless samconfig.toml's build_in_source says otherwise).
		"TMPDIR=" + t.TempDir(),
	}
	ran := map[string][]string{}
	for _, b := range blocks(t, "sh") {
		script := samScript(b)
		if script == nil {
			continue
		}
		setup, ok := setups[b.doc]
		if !ok {
			t.Errorf("%s shows sam commands, and this test does not know where to run them: add %s to its setups", b, b.doc)
			continue
		}
		dir := setup(t)
		for _, line := range script {
			start := time.Now()
			out, err := run(dir, line, env...)
			if err != nil {
				t.Fatalf("%s: %s: %v\n%s", b, line, err, out)
			}
			t.Logf("%s: %s: ok in %s", b, line, time.Since(start).Round(100*time.Millisecond))
			ran[b.doc] = append(ran[b.doc], line)
		}
	}
	for doc := range setups {
		if !slices.ContainsFunc(ran[doc], func(l string) bool { return strings.HasPrefix(l, "sam build") }) {
			t.Errorf("%s shows no sam build any more: remove it from this test's setups", doc)
		}
	}
}

// samScript returns the command lines of a block that shows sam commands,
// up to its first sam command that needs an AWS account, or nil.
func samScript(b block) []string {
	var lines []string
	shows := false
	for _, c := range commandsOf(b) {
		args := strings.Fields(c.line)
		if args[0] != "sam" {
			lines = append(lines, c.line)
			continue
		}
		shows = true
		if len(args) < 2 || !slices.Contains(localSAM, args[1]) {
			break
		}
		lines = append(lines, c.line)
	}
	if !shows {
		return nil
	}
	return lines
}

// repositoryCopy copies the repository, less what git ignores of it, to a
// temporary folder, and returns the folder.
func repositoryCopy(t *testing.T) string {
	t.Helper()
	root := testenv.RepoRoot()
	dir := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if slices.Contains([]string{".git", ".tools", "build", ".aws-sam"}, e.Name()) {
			continue
		}
		from, to := filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())
		if e.IsDir() {
			err = os.CopyFS(to, os.DirFS(from))
		} else {
			err = os.WriteFile(to, []byte(read(t, from)), 0o644)
		}
		if err != nil {
			t.Fatalf("copying the repository: %v", err)
		}
	}
	return dir
}

// guideModule makes the module of docs/getting-started.md in a temporary
// folder, with the guide's commands, and returns the folder.
func guideModule(t *testing.T) string {
	t.Helper()
	root := testenv.RepoRoot()
	dir := t.TempDir()
	guide := blocksOf(t, "docs/getting-started.md")
	step := func(start string) {
		t.Helper()
		i := slices.IndexFunc(guide, func(b block) bool { return strings.HasPrefix(b.text, start) })
		if i < 0 {
			t.Fatalf("docs/getting-started.md has no block beginning with %q", start)
		}
		script := strings.ReplaceAll(guide[i].text, "/path/to/lambda", root)
		if out, err := run(dir, "set -e\n"+script, "GOWORK=off"); err != nil {
			t.Fatalf("%s:\n%s%v\n%s", guide[i], script, err, out)
		}
	}
	step("go mod init ")
	for _, name := range []string{"main.go", "main_test.go", "createtable/main.go", "template.yaml", "Makefile"} {
		write(t, filepath.Join(dir, name), read(t, filepath.Join(root, "examples", "minimal", name)))
	}
	step("go mod tidy\n")
	return dir
}
