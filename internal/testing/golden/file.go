package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the files of testdata/golden with the records this version writes")

// Updating reports whether the test run rewrites the golden files
// (-update).
func Updating() bool { return *update }

// path is the file name of testdata/golden.
func path(name string) string { return filepath.Join("testdata", "golden", name) }

// Check compares got with the golden file name, or with -update writes
// got to it.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	p := path(name)
	if *update {
		Write(t, name, got)
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v: run the test with -update to write it", err)
	}
	Compare(t, p, want, got)
}

// Compare fails t unless got, a record this version wrote, is want, the
// record of the golden file name.
func Compare(t testing.TB, name string, want, got []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("this version writes another record than %s (-file +written):\n%s"+
			"If the change is deliberate, regenerate the file with -update and say in CHANGELOG.md what changed in the record format; docs/record-format.md says what a change must keep.",
			name, cmp.Diff(string(want), string(got)))
	}
}

// Write writes the golden file name: with -update, the records that are
// only read back, never compared (written by another program, or
// encrypted with a random nonce).
func Write(t testing.TB, name string, b []byte) {
	t.Helper()
	p := path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", p)
}

// Read returns the golden file name.
func Read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(path(name))
	if err != nil {
		t.Fatalf("%v: run the test that writes it with -update", err)
	}
	return b
}

// JSON returns the JSON text raw as the golden files hold it, so that
// one value has one text: object members sorted by name, strings and
// numbers as raw has them, indented by two spaces, no HTML escapes, and
// a final newline.
func JSON(t testing.TB, raw []byte) []byte {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("golden: %v: %s", err, raw)
	}
	return Marshal(t, v)
}

// Marshal returns v's JSON text in the form of JSON.
func Marshal(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(v); err != nil {
		t.Fatalf("golden: %v", err)
	}
	return b.Bytes()
}

// CheckRead fails t unless the files of testdata/golden are exactly
// read, the ones the package's read test read: a file no test reads
// proves nothing, and a file a test names must exist.
func CheckRead(t testing.TB, read []string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("testdata", "golden"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	slices.Sort(files)
	read = slices.Compact(slices.Sorted(slices.Values(read)))
	if diff := cmp.Diff(files, read); diff != "" {
		t.Errorf("the files of testdata/golden and the ones the test reads differ (-files +read):\n%s", diff)
	}
}

// Stored returns the golden file name, or an error when there is none.
func Stored(name string) ([]byte, error) { return os.ReadFile(path(name)) }
