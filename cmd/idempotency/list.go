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
The statuses:

  stuck       INPROGRESS records whose lease has ended: invocations that
              crashed or timed out; the next delivery takes the key over,
              but if none comes, the event was never processed
  inprogress  every INPROGRESS record
  uncertain   UNCERTAIN records, to resolve (see 'idempotency resolve')
  completed   COMPLETED records
  any         every record

With --json, each record's "next" is what a delivery of the same request
meets, as the library's engine answers it with the settings of this
command's environment (an abandon policy, say).

Records past their expiry count as absent, as for the library, and are
skipped (DynamoDB's TTL deletes them, usually within days; Redis a minute
after). A record's age is taken from when it completed, else from its
expiry less --expires-after. On DynamoDB, the scan reads the whole table:
on a large one, it takes the read capacity of a full table read. On Redis,
it SCANs the keys that start with --redis-key-prefix, on each primary of a
cluster, and reads each record with HGETALL; a record may be listed twice,
when the server resizes its key table during the scan.

` + storeAbout + `
Exit status: 0 when the scan ended, 1 when it failed, 2 on a bad command line.
`

// listStatuses are the values of -status, with the status each reads.
var listStatuses = map[string]idempotency.Status{
	"stuck":      idempotency.StatusInProgress,
	"inprogress": idempotency.StatusInProgress,
	"uncertain":  idempotency.StatusUncertain,
	"completed":  idempotency.StatusComplete,
	"any":        "",
}

func (c *cli) list(ctx context.Context, args []string) int {
	fs := c.flags("list", "[flags]", listAbout)
	var where storeFlags
	where.register(fs, c.getenv(template.TableEnv), "the DynamoDB `table` (default: $POWERTOOLS_IDEMPOTENCY_TABLE)")
	status := fs.String("status", "any", "the records to list: stuck, inprogress, uncertain, completed or any")
	olderThan := fs.Duration("older-than", 0, "list only records at least this `old`")
	expiresAfter := fs.Duration("expires-after", 0, "the functions' record `expiry`, for the age of records that do not say when they were written (default: $POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER, else 1h)")
	limit := fs.Int("limit", 0, "stop after this many records (0: no limit)")
	asJSON := fs.Bool("json", false, "write JSON lines, one record a line")
	if status, ok := c.parse(fs, args, 0, 0); !ok {
		return status
	}
	if err := where.check(fs); err != nil {
		return c.usageError("list", "%v", err)
	}
	want, ok := listStatuses[*status]
	if !ok {
		return c.usageError("list", "-status %q: want stuck, inprogress, uncertain, completed or any", *status)
	}
	// What a delivery of each record meets, and how old a record is that
	// does not say, are for the functions' settings in this command's
	// environment (the expiry, an abandon policy), with the flag on top.
	functions := handler.Function{Code: map[string]handler.Setting{}, Env: map[string]handler.Setting{}}
	for _, kv := range c.environ() {
		name, value, _ := strings.Cut(kv, "=")
		functions.Env[name] = handler.Setting{Value: value, Source: name + " in this command's environment"}
	}
	if *expiresAfter != 0 {
		functions.Code["ExpiresAfter"] = handler.Setting{Value: expiresAfter.String(), Source: "--expires-after"}
	}
	w, err := handler.Records(functions, c.now)
	if err != nil {
		return c.usageError("list", "%v", err)
	}
	*expiresAfter = w.ExpiresAfter
	store, err := c.open(ctx, &where, where.table)
	if err != nil {
		return c.fail("list", err)
	}
	defer store.close()

	now := c.now()
	match := func(rec *idempotency.Record) bool {
		if !rec.Expiry.IsZero() && !now.Before(rec.Expiry) {
			return false
		}
		if *status == "stuck" && now.Before(rec.LeaseEnd) {
			return false
		}
		age, known := recordAge(rec, now, *expiresAfter)
		return *olderThan == 0 || (known && age >= *olderThan)
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
	for page, err := range store.scan(ctx, want) {
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
			d, err := w.Meet(ctx, rec)
			if err != nil {
				return c.fail("list", err)
			}
			next := says(d, now)
			matched++
			if *asJSON {
				progress(true)
				if err := writeJSON(c.stdout, view(rec, now, *expiresAfter, next)); err != nil {
					return c.fail("list", err)
				}
			} else {
				v := view(rec, now, *expiresAfter, next)
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
	fmt.Fprintln(c.stderr)
	return exitOK
}
