package docstest

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// TestCommands checks the commands that the docs tell a reader to run in a
// clone of this repository. Most are not run here: `make test` runs what
// the go test commands run, the benchmarks and the soak take long, and
// deploys and inspections need an AWS account. What they name is looked
// up instead: the make targets, the scripts and files, the packages of go
// commands, the versions scripts/tools.sh pins. The idempotency command's
// install and lint lines run as shown.
//
// docs/getting-started.md's commands run in the reader's own module;
// examples/minimal's own test runs them, and the SAM commands' test its
// sam build.
func TestCommands(t *testing.T) {
	t.Parallel()
	root := testenv.RepoRoot()
	var cmds []command
	for _, b := range blocks(t, "sh", "console", "") {
		cmds = append(cmds, commandsOf(b)...)
	}

	t.Run("make targets", func(t *testing.T) {
		makefile := read(t, filepath.Join(root, "Makefile"))
		var targets []*regexp.Regexp
		for _, m := range regexp.MustCompile(`(?m)^([\w%-]+)\s*:([^=]|$)`).FindAllStringSubmatch(makefile, -1) {
			targets = append(targets, regexp.MustCompile("^"+strings.ReplaceAll(regexp.QuoteMeta(m[1]), "%", ".+")+"$"))
		}
		named := map[string]string{} // target: where a doc names it
		for _, c := range cmds {
			if m := makeLine.FindStringSubmatch(c.line); m != nil {
				named[m[1]] = c.String()
			}
		}
		for _, doc := range docs(t) {
			for _, m := range makeInline.FindAllStringSubmatch(read(t, filepath.Join(root, doc)), -1) {
				named[m[1]] = doc
			}
		}
		t.Logf("targets named: %v", slices.Sorted(maps.Keys(named)))
		for target, where := range named {
			if !slices.ContainsFunc(targets, func(re *regexp.Regexp) bool { return re.MatchString(target) }) {
				t.Errorf("%s: make %s: the Makefile has no such target", where, target)
			}
		}
	})

	t.Run("files", func(t *testing.T) {
		for _, c := range cmds {
			program := programOf.FindStringSubmatch(c.line)
			if program != nil && (strings.HasPrefix(program[1], "scripts/") || strings.HasPrefix(program[1], ".tools/")) {
				if strings.HasPrefix(program[1], ".tools/") && !exists(filepath.Join(root, ".tools")) {
					testenv.Unavailable(t, "%s runs %s, and there is no .tools/: make tools installs it", c, program[1])
				}
				if info, err := os.Stat(filepath.Join(root, program[1])); err != nil || info.Mode()&0o111 == 0 {
					t.Errorf("%s: %s is not an executable file of the repository", c, program[1])
				}
			}
			for _, m := range cloneFile.FindAllStringSubmatch(c.line, -1) {
				if !exists(filepath.Join(root, m[1])) {
					t.Errorf("%s: the repository has no %s", c, m[1])
				}
			}
		}
	})

	t.Run("go packages", func(t *testing.T) {
		patterns := map[string][]string{} // folder: the patterns of its go commands
		for _, c := range cmds {
			if c.block.doc == "docs/getting-started.md" || !goLine.MatchString(c.line) {
				continue
			}
			for _, arg := range strings.Fields(strings.SplitN(c.line, " #", 2)[0]) {
				if strings.HasPrefix(arg, "./") {
					patterns[c.dir] = append(patterns[c.dir], strings.TrimRight(arg, ")"))
				}
			}
		}
		if len(patterns) == 0 {
			t.Fatal("no go command with a package pattern in the docs")
		}
		for dir, ps := range patterns {
			t.Logf("in %s: go list %s", dir, strings.Join(ps, " "))
			out, err := run(filepath.Join(root, dir), "go list "+strings.Join(ps, " ")+" >/dev/null", "GOWORK=off")
			if err != nil || strings.Contains(out, "matched no packages") {
				t.Errorf("in %s, go list %s: %v\n%s", filepath.Join(".", dir), strings.Join(ps, " "), err, out)
			}
		}
	})

	t.Run("pinned versions", func(t *testing.T) {
		tools := read(t, filepath.Join(root, "scripts", "tools.sh"))
		for _, pin := range []struct{ variable, inDocs string }{
			{"RIE_VERSION", `aws-lambda-rie@(\S+)`},
			{"MOTO_VERSION", `moto\[server\]==([\w.]+)`},
		} {
			want := regexp.MustCompile(`(?m)^` + pin.variable + `=(\S+)$`).FindStringSubmatch(tools)
			if want == nil {
				t.Fatalf("scripts/tools.sh sets no %s", pin.variable)
			}
			found := false
			for _, c := range cmds {
				for _, m := range regexp.MustCompile(pin.inDocs).FindAllStringSubmatch(c.line, -1) {
					found = true
					if m[1] != want[1] {
						t.Errorf("%s: %s, but scripts/tools.sh pins %s=%s", c, m[0], pin.variable, want[1])
					}
				}
			}
			if !found {
				t.Errorf("no doc installs %s any more (%s): remove it from this test", pin.variable, pin.inDocs)
			}
		}
	})

	t.Run("idempotency command", func(t *testing.T) {
		// The install block, with the binary in a folder of the test's.
		bin := t.TempDir()
		path := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
		i := slices.IndexFunc(blocksOf(t, "docs/operations.md"), func(b block) bool {
			return strings.Contains(b.text, "go install ./cmd/idempotency")
		})
		if i < 0 {
			t.Fatal("docs/operations.md has no block that installs the idempotency command")
		}
		install := blocksOf(t, "docs/operations.md")[i]
		if out, err := run(root, "set -e\n"+install.text, "GOBIN="+bin, path, "GOWORK=off"); err != nil {
			t.Fatalf("%s:\n%s%v\n%s", install, install.text, err, out)
		}

		// Its lint, on the templates of the repository.
		ran := 0
		for _, c := range cmds {
			args := strings.Fields(c.line)
			if c.block.lang != "console" || len(args) < 3 || args[0] != "idempotency" || args[1] != "lint" {
				continue
			}
			if file := strings.TrimSuffix(args[2], ";"); !exists(filepath.Join(root, file)) {
				t.Logf("%s: not run: the repository has no %s", c, file)
				continue
			}
			out, _ := run(root, c.line, path)
			if out != c.output {
				t.Errorf("%s: %s printed\n%s\nthe doc shows\n%s", c, c.line, out, c.output)
			}
			ran++
		}
		if ran == 0 {
			t.Error("no doc shows `idempotency lint` on a template of the repository")
		}
	})
}

var (
	// After the variables set for it, the program a command line runs.
	programOf  = regexp.MustCompile(`^(?:\w+=\S*\s+)*(\S+)`)
	makeLine   = regexp.MustCompile(`^(?:\w+=\S*\s+)*make\s+([\w-]+)`)
	makeInline = regexp.MustCompile("`make\\s+([\\w-]+)")
	goLine     = regexp.MustCompile(`\bgo (build|install|list|run|test|vet)\b`)
	// A file of the reader's clone, named as docs/getting-started.md does.
	cloneFile = regexp.MustCompile(`/path/to/lambda/(\S+)`)
	cdLine    = regexp.MustCompile(`^cd ([\w./-]+)(\s|$)`)
)

// A command is a command line of a block, continuation lines joined.
type command struct {
	block  block
	line   string
	dir    string // the folder it runs in, from the repository: after a cd
	output string // what a console block shows it printing
}

func (c command) String() string { return c.block.String() }

// commandsOf returns the commands of a shell or console block. In a
// console block, a command follows a "$ " prompt and the lines up to the
// next prompt are its output.
func commandsOf(b block) []command {
	var cmds []command
	dir := "."
	lines := strings.Split(strings.TrimSuffix(b.text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if b.lang == "console" {
			if !strings.HasPrefix(line, "$ ") {
				if len(cmds) > 0 {
					cmds[len(cmds)-1].output += line + "\n"
				}
				continue
			}
			line = strings.TrimPrefix(line, "$ ")
		}
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + strings.TrimLeft(lines[i], " ")
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmds = append(cmds, command{block: b, line: line, dir: dir})
		if m := cdLine.FindStringSubmatch(line); m != nil && !filepath.IsAbs(m[1]) {
			dir = filepath.Join(dir, m[1])
		}
	}
	return cmds
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
