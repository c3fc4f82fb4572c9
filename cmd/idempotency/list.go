package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/handler"
	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

const listAbout = `Lists the records of a store by status and age, with a paginated scan
(a progress line on standard error while it runs, when that is a terminal).
The statuses, in any case:

  stuck       INPROGRESS records whose invocation has ended without
              completing or releasing its key (crashed or timed out): its
              lease has ended, or, for a record that keeps its invocation's
              deadline (an abandon policy of block or uncertain), that
              deadline and 5s have passed; the next delivery takes the key
              over, or finds it abandoned, but if none comes, the event
              was never processed
  inprogress  every INPROGRESS record
  uncertain   UNCERTAIN records, to resolve (see 'idempotency resolve')
  completed   COMPLETED records
  any         every record

A record's AGE is what the record itself says: a COMPLETED record's time
since it completed, a stuck record's time since its invocation ended; "?"
(null with --json) for the others, and for records of writers that keep no
completion time. --older-than lists only records known to be that old,
and says how many of unknown age it left out.

With --json, each record's "next" is what a delivery of the same request
meets, as the library's engine answers it with the settings of this
command's environment (an abandon policy, say), and "delivery" the same as
inspect's "next" object.

Records past their expiry count as absent, as for the library, and are
skipped (DynamoDB's TTL deletes them, usually within days; Redis a minute
after). On DynamoDB, the scan reads the whole table: on a large one, it
takes the read capacity of a full table read. On Redis, it SCANs the keys
that start with --redis-key-prefix, on each primary of a cluster, and
reads each record with HGETALL; a record may be listed twice, when the
server resizes its key table during the scan.

` + storeAbout + `
Exit status: 0 when the scan ended, 1 when it failed, 2 on a bad command line.
`

// listStatuses are the values of -status, in lower case, with the status
// each reads.
var listStatuses = map[string]idempotency.Status{
	"stuck":      idempotency.StatusInProgress,
	"inprogress": idempotency.StatusInProgress,
	"uncertain":  idempotency.StatusUncertain,
	"completed":  idempotency.StatusComplete,
	"any":        "",
}

// listLine is one line of list's -json output: the record, and what a
// delivery of the same request meets, as inspect's next says it.
type listLine struct {
	recordView
	Delivery verdictView `json:"delivery"`
}

// recordStatus reads a record's status as an operator writes it:
// INPROGRESS, COMPLETED or UNCERTAIN, in any case.
func recordStatus(s string) (idempotency.Status, bool) {
	for _, status := range []idempotency.Status{idempotency.StatusInProgress, idempotency.StatusComplete, idempotency.StatusUncertain} {
		if strings.EqualFold(s, string(status)) {
			return status, true
		}
	}
	return "", false
}

func (c *cli) list(ctx context.Context, args []string) int {
	fs := c.flags("list", "[flags]", listAbout)
	var where storeFlags
	where.register(fs, c.getenv(template.TableEnv), "the DynamoDB `table` (default: $POWERTOOLS_IDEMPOTENCY_TABLE)")
	status := fs.String("status", "any", "the records to list: stuck, inprogress, uncertain, completed or any")
	olderThan := fs.Duration("older-than", 0, "list only records known to be at least this `old` (see AGE above)")
	limit := fs.Int("limit", 0, "stop after this many records (0: no limit)")
	asJSON := fs.Bool("json", false, "write JSON lines, one record a line")
	if status, ok := c.parse(fs, args, 0, 0); !ok {
		return status
	}
	if err := where.check(fs); err != nil {
		return c.usageError("list", "%v", err)
	}
	*status = strings.ToLower(*status)
	want, ok := listStatuses[*status]
	if !ok {
		return c.usageError("list", "-status %q: want stuck, inprogress, uncertain, completed or any", *status)
	}
	// What a delivery of each record meets is for the functions'
	// settings in this command's environment (an abandon policy, say).
	functions := handler.Function{Code: map[string]handler.Setting{}, Env: map[string]handler.Setting{}}
	for _, kv := range c.environ() {
		name, value, _ := strings.Cut(kv, "=")
		functions.Env[name] = handler.Setting{Value: value, Source: name + " in this command's environment"}
	}
	w, err := handler.Records(functions, c.now)
	if err != nil {
		return c.usageError("list", "%v", err)
	}
	store, err := c.open(ctx, &where)
	if err != nil {
		return c.fail("list", err)
	}
	defer store.close()

	now := c.now()
	unknownAge := 0
	match := func(rec *idempotency.Record) bool {
		if !rec.Expiry.IsZero() && !now.Before(rec.Expiry) {
			return false
		}
		if *status == "stuck" && !stuck(rec, now) {
			return false
		}
		if *olderThan == 0 {
			return true
		}
		age, known := recordAge(rec, now)
		if !known {
			unknownAge++
		}
		return known && age >= *olderThan
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	if !*asJSON {
		fmt.Fprintln(tw, "KEY\tSTATUS\tAGE\tEXPIRY\tLEASE END\tLEASE TOKEN")
	}
	var scanned, matched, corrupted int
	one, many := store.scanned()
	progress := func(final bool) {
		if !c.terminal {
			return
		}
		fmt.Fprintf(c.stderr, "\r\033[Kscanned %d %s, %d matched", scanned, many, matched)
		if final {
			fmt.Fprint(c.stderr, "\r\033[K")
		}
	}
	for page, err := range store.scan(w.InMode(ctx), want) {
		if err != nil {
			progress(true)
			return c.fail("list", err)
		}
		scanned += page.Scanned
		for _, err := range page.Corrupted {
			corrupted++
			progress(true)
			fmt.Fprintf(c.stderr, "idempotency list: %s\n", escape(err.Error()))
		}
		stop := false
		for _, rec := range page.Records {
			if !match(rec) {
				continue
			}
			d, err := w.Meet(ctx, rec.Key, func(context.Context, string) (*idempotency.Record, error) { return rec, nil })
			if err != nil {
				return c.fail("list", err)
			}
			next := says(d, now)
			matched++
			if *asJSON {
				progress(true)
				if err := writeJSON(c.stdout, listLine{view(rec, now, next), verdict(d, now)}); err != nil {
					return c.fail("list", err)
				}
			} else {
				v := view(rec, now, next)
				age := "?"
				if v.AgeSeconds != nil {
					age = (time.Duration(*v.AgeSeconds) * time.Second).String()
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", printable(v.Key), printable(v.Status), age, orNone(v.Expiry), orNone(v.LeaseEnd), orNone(printable(v.LeaseToken)))
			}
			if stop = *limit > 0 && matched >= *limit; stop {
				break
			}
		}
		progress(false)
		if stop {
			break
		}
	}
	progress(true)
	if !*asJSON {
		tw.Flush()
	}
	fmt.Fprintf(c.stderr, "idempotency list: %s listed, %s scanned", count(matched, "record", "records"), count(scanned, one, many))
	if corrupted > 0 {
		fmt.Fprintf(c.stderr, ", %d corrupted (above)", corrupted)
	}
	if unknownAge > 0 {
		fmt.Fprintf(c.stderr, ", %s of unknown age left out (--older-than)", count(unknownAge, "record", "records"))
	}
	fmt.Fprintln(c.stderr)
	return exitOK
}
