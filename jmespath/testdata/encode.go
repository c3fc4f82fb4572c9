//go:build ignore

// Encode renders the envelope fixtures: for every templates/<name>.tmpl it
// writes events/<name>.json (the event as Lambda receives it, with nested
// JSON quoted, base64-encoded or gzipped as the AWS service does) and
// expected/<name>.json (what the envelope must extract).
//
// The encoded fields cannot be edited by hand, so the templates are the
// source and the JSON files are generated. Run it from the jmespath folder
// after changing a template, and commit both:
//
//	go run ./testdata/encode.go
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

func main() {
	log.SetFlags(0)
	dir := "testdata"
	if _, err := os.Stat(filepath.Join(dir, "templates")); err != nil {
		log.Fatalf("run from the jmespath folder: %v", err)
	}
	root := template.New("root")
	root.Funcs(template.FuncMap{
		"render":  func(name string, data any) (string, error) { return render(root, name, data) },
		"dict":    dict,
		"compact": compact,
		"quote":   quote,
		"base64":  func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"gzip64":  gzip64,
		"md5":     func(s string) string { sum := md5.Sum([]byte(s)); return hex.EncodeToString(sum[:]) },
	})
	if _, err := root.ParseGlob(filepath.Join(dir, "templates", "*.tmpl")); err != nil {
		log.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "templates", "*.tmpl"))
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".tmpl")
		if name == "payloads" {
			continue
		}
		for _, out := range []struct{ tmpl, dir string }{{"event", "events"}, {"want", "expected"}} {
			if err := write(root, name+"/"+out.tmpl, filepath.Join(dir, out.dir, name+".json")); err != nil {
				log.Fatalf("%s: %v", f, err)
			}
		}
	}
}

// write renders the template and stores it indented, which also proves the
// output is valid JSON.
func write(root *template.Template, tmpl, path string) error {
	s, err := render(root, tmpl, nil)
	if err != nil {
		return err
	}
	var compacted, out bytes.Buffer
	if err := json.Compact(&compacted, []byte(s)); err != nil {
		return fmt.Errorf("%s is not JSON: %w\n%s", tmpl, err, s)
	}
	if err := json.Indent(&out, compacted.Bytes(), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}

func render(root *template.Template, name string, data any) (string, error) {
	var b strings.Builder
	if err := root.ExecuteTemplate(&b, name, data); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}

func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, fmt.Errorf("dict wants key/value pairs, got %d values", len(kv))
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict key %v is not a string", kv[i])
		}
		m[k] = kv[i+1]
	}
	return m, nil
}

// compact is how services that re-serialise a document send it (SQS bodies
// written by the SDK, the S3 notification inside an SNS message).
func compact(s string) (string, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return "", fmt.Errorf("compact: %w\n%s", err, s)
	}
	return b.String(), nil
}

// quote returns s as a JSON string literal, quotes included; HTML characters
// stay readable.
func quote(s string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// gzip64 is what CloudWatch Logs puts in awslogs.data.
func gzip64(s string) (string, error) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}
