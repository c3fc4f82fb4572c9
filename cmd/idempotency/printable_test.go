package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

func TestPrintable(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, value, text string }{
		{"orders#4b08", "orders#4b08", "orders#4b08"},
		{"", "", ""},
		{"café ✓", "café ✓", "café ✓"},
		{"a\x1b[2Jb", `"a\x1b[2Jb"`, `a\x1b[2Jb`},
		{"a\rb\tc\nd", `"a\rb\tc\nd"`, `a\rb\tc\nd`},
		{"a\x7fb\u0085c\u009bd", `"a\x7fb\u0085c\u009bd"`, `a\x7fb\u0085c\u009bd`},
		{"evil\u202etxt.exe", `"evil\u202etxt.exe"`, `evil\u202etxt.exe`},
		{"zero\u200bwidth", `"zero\u200bwidth"`, `zero\u200bwidth`},
		{"bad\xffutf8", `"bad\xffutf8"`, `bad\xffutf8`},
		// A plain value never holds a quote or a backslash, so that a
		// value spelling an escape is not taken for an escaped one.
		{`a\x1bb`, `"a\\x1bb"`, `a\x1bb`},
		{`say "hi"`, `"say \"hi\""`, `say "hi"`},
	} {
		if got := printable(tt.in); got != tt.value {
			t.Errorf("printable(%q) = %s, want %s", tt.in, got, tt.value)
		}
		if got := escape(tt.in); got != tt.text {
			t.Errorf("escape(%q) = %s, want %s", tt.in, got, tt.text)
		}
	}
}

// terminalSafe fails t when s holds a character that a terminal acts on
// rather than shows, apart from the newlines that end lines.
func terminalSafe(t *testing.T, what, s string) {
	t.Helper()
	if !clean(strings.ReplaceAll(s, "\n", "")) {
		t.Errorf("%s holds characters a terminal acts on: %q", what, s)
	}
}

// TestHostileRecord: a record whose key and lease token hold an escape
// sequence that clears the screen, a carriage return and a tab is shown
// escaped by list and inspect, on every store: it cannot clear the
// operator's screen, write over a line or shift the table's columns.
func TestHostileRecord(t *testing.T) {
	t.Parallel()
	for _, srv := range recordServers {
		t.Run(srv.name, func(t *testing.T) {
			w := srv.world(t)
			now := time.Now()
			rec := &idempotency.Record{
				Key:        "orders-fn#\x1b[2J\rforged line\tcolumn",
				Status:     idempotency.StatusComplete,
				Expiry:     now.Add(time.Hour).Truncate(time.Second),
				LeaseToken: "tok\x1b]0;title\x07en",
				Response:   []byte("{\"ok\":\"\x1b[31mred\"}"),
			}
			if existing, err := w.store.Acquire(t.Context(), rec, now); err != nil || existing != nil {
				t.Fatalf("write: %v, %v", existing, err)
			}
			const key = `"orders-fn#\x1b[2J\rforged line\tcolumn"`

			r := w.h.run(t, w.at("list")...).want(t, exitOK)
			terminalSafe(t, "list", r.stdout+r.stderr)
			wantContains(t, r, key, `"tok\x1b]0;title\aen"`)
			if lines := strings.Count(r.stdout, "\n"); lines != 2 {
				t.Errorf("list wrote %d lines, want the header and the record's:\n%s", lines, r.stdout)
			}

			r = w.h.run(t, w.at("inspect", "--response", "--key", rec.Key)...).want(t, exitOK)
			terminalSafe(t, "inspect", r.stdout+r.stderr)
			wantField(t, r, "key", key)
			// Quoted, as docs/operations.md says of a value that needs
			// escapes.
			wantContains(t, r, "response\n"+`"{\"ok\":\"\x1b[31mred\"}"`+"\n")

			// The JSON output keeps the value, escaped as JSON escapes it.
			r = w.h.run(t, w.at("inspect", "--json", "--key", rec.Key)...).want(t, exitOK)
			var got inspection
			if err := parseJSON(r.stdout, &got); err != nil || got.Record == nil || got.Record.Key != rec.Key {
				t.Errorf("inspect --json = %s (%v)", r.stdout, err)
			}
		})
	}
}
