package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// exitTable reads the exit-status table of docs/operations.md: each
// status's examples, backticks left out.
func exitTable(t *testing.T) map[int][]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, "| status | when | for example |")
	if start < 0 {
		t.Fatal("docs/operations.md has no exit-status table")
	}
	tbl := doc[start:]
	tbl = tbl[:strings.Index(tbl, "\n\n")]
	rows := map[int][]string{}
	row := regexp.MustCompile(`(?m)^\| ([012]) \| [^|]+ \| (.+) \|$`)
	for _, m := range row.FindAllStringSubmatch(tbl, -1) {
		status, _ := strconv.Atoi(m[1])
		for item := range strings.SplitSeq(m[2], "; ") {
			rows[status] = append(rows[status], strings.ReplaceAll(item, "`", ""))
		}
	}
	if len(rows) != 3 {
		t.Fatalf("docs/operations.md's exit-status table has %d rows, want 3: has its layout changed?", len(rows))
	}
	return rows
}

// helpTable reads the same table from the command's help.
func helpTable() map[int][]string {
	rows := map[int][]string{}
	status := -1
	item := ""
	flush := func() {
		if item != "" {
			rows[status] = append(rows[status], item)
		}
		item = ""
	}
	head := regexp.MustCompile(`^  ([012])  `)
	for line := range strings.Lines(usage[strings.Index(usage, "Exit status:"):]) {
		line = strings.TrimRight(line, "\n")
		switch {
		case head.MatchString(line):
			flush()
			status, _ = strconv.Atoi(line[2:3])
		case strings.HasPrefix(line, "       - "):
			flush()
			item = strings.TrimPrefix(line, "       - ")
		case strings.HasPrefix(line, "         "):
			item += " " + strings.TrimSpace(line)
		}
	}
	flush()
	return rows
}

// TestExitStatusTable: the command's help and docs/operations.md give the
// same exit-status table, and the command exits so in each of its cases:
// every case the table names is run here, and a case without a run fails
// the test, as does a run that the table does not name.
func TestExitStatusTable(t *testing.T) {
	t.Parallel()
	docs, help := exitTable(t), helpTable()
	for status := range 3 {
		if !slices.Equal(docs[status], help[status]) {
			t.Errorf("exit %d: docs/operations.md says\n  %s\nthe help says\n  %s", status, strings.Join(docs[status], "\n  "), strings.Join(help[status], "\n  "))
		}
	}

	w := newWorld(t, testenv.MotoEnv)
	endpoint := w.h.endpoint
	const ev = `{"order_id":"o-1","amount":1250}`
	w.shop.invoke(t, ev)
	file := writeFile(t, "event.json", ev)
	event := func(id string, uncertain bool) (string, string) {
		e := fmt.Sprintf(`{"order_id":%q,"amount":1}`, id)
		if uncertain {
			e = fmt.Sprintf(`{"order_id":%q,"amount":1,"uncertain":true}`, id)
		}
		w.shop.invoke(t, e)
		return e, writeFile(t, id+".json", e)
	}
	put := func(id string, rec idempotency.Record) string {
		e := fmt.Sprintf(`{"order_id":%q,"amount":1}`, id)
		rec.Key, rec.PayloadHash = w.keyOf(t, e), hashOf(t, w, e)
		if _, err := w.store.Acquire(t.Context(), &rec, time.Now()); err != nil {
			t.Fatal(err)
		}
		return writeFile(t, id+".json", e)
	}
	q := newQueues(t, endpoint, false)
	q.send(t, q.dlq, numbered(2)...)
	lone := q.create(t, fmt.Sprintf("lone-%d", time.Now().UnixNano()), nil)
	lint := func(name string) string { return filepath.Join("testdata", "lint", name) }
	unknownEntry := writeFile(t, "unknown.yaml", `
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Metadata:
      Idempotency:
        Compatibilty: python
    Properties:
      Environment:
        Variables:
          POWERTOOLS_IDEMPOTENCY_TABLE: t
          POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH: order_id
`)
	missing := filepath.Join(t.TempDir(), "missing")
	h := w.h

	cases := map[string]func(t *testing.T) result{
		"inspect: the key was computed and looked up, with or without a record": func(t *testing.T) result {
			h.run(t, w.cmd("inspect", writeFile(t, "new.json", `{"order_id":"new","amount":1}`))...).want(t, exitOK)
			return h.run(t, w.cmd("inspect", file)...)
		},
		"inspect of an event without a key, which the function runs without idempotency": func(t *testing.T) result {
			return h.run(t, w.cmd("inspect", writeFile(t, "nokey.json", `{"amount":1}`))...)
		},
		"list: the scan ended": func(t *testing.T) result { return h.run(t, w.at("list")...) },
		"forget: the record is deleted": func(t *testing.T) result {
			_, f := event("f-1", false)
			return h.run(t, w.cmd("forget", f)...)
		},
		"forget of a key whose record is already gone, while its prefix has records": func(t *testing.T) result {
			_, f := event("f-2", false)
			h.run(t, w.cmd("forget", f)...).want(t, exitOK)
			return h.run(t, w.cmd("forget", f)...)
		},
		"forget of a record deleted meanwhile, by another or by its own request whose reply was lost": func(t *testing.T) result {
			e, f := event("f-3", false)
			key := w.keyOf(t, e)
			racer := w.beforeWrite(func() {
				if err := w.store.Release(t.Context(), key, w.get(t, key).LeaseToken); err != nil || w.get(t, key) != nil {
					t.Errorf("the record is not deleted: %v", err)
				}
			})
			return racer.run(t, w.cmd("forget", f)...)
		},
		"forget --dry-run of a record it would delete": func(t *testing.T) result {
			return h.run(t, w.cmd("forget", "--dry-run", file)...)
		},
		"resolve --completed: the record is settled": func(t *testing.T) result {
			_, f := event("r-1", true)
			return h.run(t, w.cmd("resolve", "--completed", "--response", writeFile(t, "r.json", `{}`), f)...)
		},
		"resolve --failed of a record already gone": func(t *testing.T) result {
			_, f := event("r-2", true)
			h.run(t, w.cmd("resolve", "--failed", f)...).want(t, exitOK)
			return h.run(t, w.cmd("resolve", "--failed", f)...)
		},
		"redrive: the messages moved": func(t *testing.T) result {
			return h.run(t, "redrive", "--dlq", q.dlq, "--method", "copy")
		},
		"redrive --dry-run: it showed them": func(t *testing.T) result {
			return h.run(t, "redrive", "--dlq", q.dlq, "--dry-run")
		},
		"lint: no breach": func(t *testing.T) result { return h.run(t, "lint", lint("clean.yaml")) },

		"forget or resolve of a record that is not the one --token or --status names": func(t *testing.T) result {
			h.run(t, w.cmd("resolve", "--failed", "--token", "other", file)...).want(t, exitFailed)
			return h.run(t, w.cmd("forget", "--status", "uncertain", file)...)
		},
		"forget of a record whose lease is live, without --force": func(t *testing.T) result {
			f := put("live", idempotency.Record{Status: idempotency.StatusInProgress, Expiry: time.Now().Add(time.Hour).Truncate(time.Second), LeaseEnd: time.Now().Add(time.Minute).Truncate(time.Millisecond), LeaseToken: "t"})
			return h.run(t, w.cmd("forget", f)...)
		},
		"forget of a record that cannot be read, without --force": func(t *testing.T) result {
			e := `{"order_id":"bad","amount":1}`
			w.putCorrupted(t, w.keyOf(t, e))
			return h.run(t, w.cmd("forget", writeFile(t, "bad.json", e))...)
		},
		"forget of a record that changed meanwhile": func(t *testing.T) result {
			e, f := event("c-1", false)
			key := w.keyOf(t, e)
			racer := w.beforeWrite(func() {
				rec := w.get(t, key)
				w.store.Release(t.Context(), key, rec.LeaseToken)
				w.store.Acquire(t.Context(), &idempotency.Record{Key: key, Status: idempotency.StatusInProgress, Expiry: time.Now().Add(time.Hour), LeaseEnd: time.Now().Add(-time.Second), LeaseToken: "new"}, time.Now())
			})
			return racer.run(t, w.cmd("forget", f)...)
		},
		"forget of a key without a record, whose prefix has none in the store": func(t *testing.T) result {
			return h.run(t, append(w.cmd("forget", file), "--function-name", "orders-prod")...)
		},
		"resolve of a record that is not UNCERTAIN": func(t *testing.T) result {
			return h.run(t, w.cmd("resolve", "--failed", file)...)
		},
		"resolve --completed of no record": func(t *testing.T) result {
			return h.run(t, w.cmd("resolve", "--completed", "--response", writeFile(t, "r.json", `{}`), writeFile(t, "none.json", `{"order_id":"none","amount":1}`))...)
		},
		"an event its function refuses (not JSON, or without a key when one is required)": func(t *testing.T) result {
			h.run(t, w.cmd("inspect", writeFile(t, "bad.json", `{`))...).want(t, exitFailed)
			return h.run(t, w.cmd("inspect", "--key-required", writeFile(t, "nokey.json", `{"amount":1}`))...)
		},
		"settings the function refuses at cold start": func(t *testing.T) result {
			return h.run(t, w.cmd("inspect", "--expires-after", "10ms", file)...)
		},
		"no table given, or named": func(t *testing.T) result {
			return h.run(t, "inspect", "--event-key", "order_id", "--function-name", "f", file)
		},
		"an AWS error (a table that does not exist)": func(t *testing.T) result {
			return h.run(t, "inspect", "--table", "no-such-table", "--key", "f#k")
		},
		"a Redis error (a server that does not answer)": func(t *testing.T) result {
			return h.run(t, "inspect", "--store", "redis", "--redis-url", "redis://127.0.0.1:1?dial_timeout=100ms&max_retries=-1", "--key", "f#k")
		},
		"redrive of a queue that is no queue's dead-letter queue, without --to (--dry-run too)": func(t *testing.T) result {
			h.run(t, "redrive", "--dlq", lone, "--dry-run").want(t, exitFailed)
			return h.run(t, "redrive", "--dlq", lone)
		},
		"lint: a breach of the delivery rules, an unknown Metadata.Idempotency entry among them": func(t *testing.T) result {
			h.run(t, "lint", unknownEntry).want(t, exitFailed)
			return h.run(t, "lint", lint("visibility-timeout.yaml"))
		},

		"an unknown flag": func(t *testing.T) result { return h.run(t, "inspect", "--no-such-flag") },
		"forget --status that is no status": func(t *testing.T) result {
			return h.run(t, w.cmd("forget", "--status", "bogus", file)...)
		},
		"a template that is missing or not YAML": func(t *testing.T) result {
			h.run(t, "inspect", "--table", "t", "--template", missing, "--resource", "Fn", file).want(t, exitUsage)
			return h.run(t, "inspect", "--table", "t", "--template", writeFile(t, "bad.yaml", "Resources: [\n"), "--resource", "Fn", file)
		},
		"a template without the function --resource": func(t *testing.T) result {
			return h.run(t, "inspect", "--table", "t", "--template", unknownEntry, "--resource", "Other", file)
		},
		"an unknown Metadata.Idempotency entry (inspect, forget, resolve)": func(t *testing.T) result {
			h.run(t, "forget", "--table", "t", "--template", unknownEntry, "--resource", "Fn", file).want(t, exitUsage)
			h.run(t, "resolve", "--failed", "--table", "t", "--template", unknownEntry, "--resource", "Fn", file).want(t, exitUsage)
			return h.run(t, "inspect", "--table", "t", "--template", unknownEntry, "--resource", "Fn", file)
		},
		"an event file that cannot be opened": func(t *testing.T) result {
			return h.run(t, w.cmd("inspect", missing)...)
		},
		"a --response file that cannot be opened": func(t *testing.T) result {
			return h.run(t, w.at("resolve", "--key", "k", "--completed", "--response", missing)...)
		},
		"both --key and an event file, or neither": func(t *testing.T) result {
			h.run(t, w.at("inspect")...).want(t, exitUsage)
			return h.run(t, w.at("inspect", "--key", "k", file)...)
		},
	}
	for status, items := range docs {
		for _, item := range items {
			run, ok := cases[item]
			if !ok {
				t.Errorf("exit %d for %q: the test has no case of it; add one", status, item)
				continue
			}
			delete(cases, item)
			t.Run(item, func(t *testing.T) {
				r := run(t)
				if r.status != status {
					t.Errorf("want exit %d, got %v", status, r)
				}
			})
		}
	}
	for item := range cases {
		t.Errorf("the test runs %q, which the exit-status table does not name", item)
	}
}
