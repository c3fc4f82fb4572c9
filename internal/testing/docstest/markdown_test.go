package docstest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// A block is a fenced code block of a doc.
type block struct {
	doc  string // the doc's path in the repository, such as docs/errors.md
	line int    // the line of the opening fence
	lang string // the fence's info string: go, sh, console...
	text string // the lines between the fences, without the fence's indentation
	run  bool   // runMarker is the line before the fence
}

// runMarker, on the line before a Go block's fence, makes the Go blocks'
// check run the block's tests, not only compile them. A rendered page does not
// show it.
const runMarker = "<!-- docstest: run -->"

func (b block) String() string { return fmt.Sprintf("%s:%d", b.doc, b.line) }

// docs lists the pages a reader follows: README.md and docs/*.md.
func docs(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	names := []string{"README.md"}
	for _, p := range pages {
		names = append(names, filepath.ToSlash(filepath.Join("docs", filepath.Base(p))))
	}
	return names
}

// fence is a line opening or closing a code block, indented as in a list.
var fence = regexp.MustCompile("^( *)```(\\S*)\\s*$")

// blocks returns the fenced code blocks of every doc, in reading order,
// whose language is one of langs (all blocks when langs is empty).
func blocks(t *testing.T, langs ...string) []block {
	t.Helper()
	var all []block
	for _, doc := range docs(t) {
		all = append(all, blocksOf(t, doc)...)
	}
	if len(langs) == 0 {
		return all
	}
	return slices.DeleteFunc(all, func(b block) bool { return !slices.Contains(langs, b.lang) })
}

func blocksOf(t *testing.T, doc string) []block {
	t.Helper()
	lines := strings.Split(read(t, filepath.Join(testenv.RepoRoot(), doc)), "\n")
	var out []block
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := block{doc: doc, line: i + 1, lang: m[2], run: i > 0 && strings.TrimSpace(lines[i-1]) == runMarker}
		var body strings.Builder
		for i++; i < len(lines) && lines[i] != m[1]+"```"; i++ {
			body.WriteString(strings.TrimPrefix(lines[i], m[1]) + "\n")
		}
		if i == len(lines) {
			t.Fatalf("%s: the block is not closed", b)
		}
		b.text = body.String()
		out = append(out, b)
	}
	return out
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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

// run runs script with sh in dir, with env added to this process's
// environment, and returns its output (standard output and error).
func run(dir, script string, env ...string) (string, error) {
	return output(exec.Command("sh", "-c", script), dir, env...)
}

func output(cmd *exec.Cmd, dir string, env ...string) (string, error) {
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
