package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/handler"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

const forgetAbout = `Deletes one record, so that the next delivery of its event runs the
handler again: after a fix, for an event whose response was stored wrong,
or to free a key an invocation holds.

It reads the record, shows it, and deletes it only if it is still the
record shown: the delete is conditioned on its status and lease token, so
a record that changed in between (an invocation completed it, another took
it over) is left alone and shown as it now is. With --token and --status,
the record must also still be the one you saw earlier, in 'inspect' or
'list'. A record whose lease is live (an invocation runs with it, or
reconciles it) is refused unless --force: deleting it lets a duplicate run
the handler while the first still runs. Forgetting a COMPLETED record means
its effect runs again on the next delivery.

A record that is already gone (deleted by an earlier run, or expired and
removed) is not an error: forget says so and succeeds, so that a runbook
can be run again.

` + targetAbout + `
Exit status: 0 when the record is gone (deleted now, or already absent), 1
when it was not deleted (refused, changed, or an AWS or Redis error), 2
when the command line, or a file it names, cannot be read.
`

// expectation is the record the operator saw: forget and resolve refuse
// to act on another.
type expectation struct {
	token, statusFlag string
	status            idempotency.Status // statusFlag, read by parse
	force             bool
}

func (e *expectation) register(fs *flag.FlagSet) {
	fs.StringVar(&e.token, "token", "", "act only if the record still has this lease `token` (as shown by inspect or list)")
	fs.StringVar(&e.statusFlag, "status", "", "act only if the record still has this `status`: INPROGRESS, COMPLETED or UNCERTAIN, in any case")
	fs.BoolVar(&e.force, "force", false, "act even when an invocation holds a live lease on the record, or the record cannot be read")
}

// parse reads --status, after the flags are parsed.
func (e *expectation) parse() error {
	if e.statusFlag == "" {
		return nil
	}
	status, ok := recordStatus(e.statusFlag)
	if !ok {
		return fmt.Errorf("--status %q: want INPROGRESS, COMPLETED or UNCERTAIN", e.statusFlag)
	}
	e.status = status
	return nil
}

// check returns why rec, read at now, must not be acted on, or nil.
func (e *expectation) check(rec *idempotency.Record, c *cli) error {
	if e.token != "" && rec.LeaseToken != e.token {
		return fmt.Errorf("the record's lease token is %s, not %s: it is not the record you saw", orNone(rec.LeaseToken), e.token)
	}
	if e.status != "" && rec.Status != e.status {
		return fmt.Errorf("the record's status is %s, not %s: it is not the record you saw", rec.Status, e.status)
	}
	now := c.now()
	live := rec.Expiry.IsZero() || now.Before(rec.Expiry)
	if live && now.Before(rec.LeaseEnd) && !e.force {
		return fmt.Errorf("an invocation holds a live lease on the record until %s: acting now lets a duplicate run the handler while it still runs; wait, or give --force", when(rec.LeaseEnd, now))
	}
	return nil
}

// checkUnreadable returns why a record that cannot be read must not be
// deleted, or nil.
func (e *expectation) checkUnreadable() error {
	switch {
	case e.token != "" || e.status != "":
		return errors.New("the record cannot be read, so --token and --status cannot be checked: leave them out, and give --force")
	case !e.force:
		return errors.New("the record cannot be read, and no invocation can take its key over until it expires: give --force to delete it")
	}
	return nil
}

func (c *cli) forget(ctx context.Context, args []string) int {
	fs := c.flags("forget", "[flags] [EVENT_FILE]", forgetAbout)
	var t target
	t.register(fs)
	var want expectation
	want.register(fs)
	dryRun := fs.Bool("dry-run", false, "read the record and say whether it would be deleted, and what a delivery would meet then; delete nothing")
	if status, ok := c.parse(fs, args, 0, 1); !ok {
		return status
	}
	if err := t.where.check(fs); err != nil {
		return c.usageError("forget", "%v", err)
	}
	if err := want.parse(); err != nil {
		return c.usageError("forget", "%v", err)
	}
	sub, err := c.subject(ctx, &t, fs.Args())
	if err != nil {
		return c.fail("forget", err)
	}
	defer sub.store.close()
	d, err := sub.read(ctx)
	if err == nil {
		err = sub.keyed(d, c.now)
	}
	if err != nil {
		return c.fail("forget", err)
	}
	switch {
	case d.Corrupted != nil:
		return c.forgetUnreadable(ctx, sub, d, &want, *dryRun)
	case d.Record == nil:
		return c.gone(ctx, "forget", sub, d)
	}
	rec := d.Record
	if err := want.check(rec, c); err != nil {
		c.show("the record", d, sub)
		return c.fail("forget", err)
	}
	if *dryRun {
		c.before("would delete", rec)
		fmt.Fprintf(c.stdout, "then a delivery runs the handler; nothing deleted (--dry-run)\n")
		return exitOK
	}
	if err := sub.store.Delete(ctx, rec); err != nil {
		return c.deleteFailed(ctx, "forget", "not deleted", sub, err)
	}
	c.before("deleted", rec)
	return c.current(ctx, "forget", sub)
}

// forgetUnreadable deletes, with --force, the record of d that cannot be
// read.
func (c *cli) forgetUnreadable(ctx context.Context, sub *subject, d *handler.Delivery, want *expectation, dryRun bool) int {
	fmt.Fprintf(c.stdout, "the record of key %s cannot be read: %s\n  next delivery  %s\n", printable(d.Key), escape(d.Corrupted.Error()), escape(says(d, c.now())))
	if err := want.checkUnreadable(); err != nil {
		return c.fail("forget", err)
	}
	if dryRun {
		fmt.Fprintln(c.stdout, "would delete it; then a delivery runs the handler; nothing deleted (--dry-run)")
		return exitOK
	}
	if err := sub.store.DeleteCorrupted(ctx, d.Key); err != nil {
		return c.deleteFailed(ctx, "forget", "not deleted", sub, err)
	}
	fmt.Fprintln(c.stdout, "deleted")
	return c.current(ctx, "forget", sub)
}

// show writes the record that d met under a title, with what the next
// delivery meets.
func (c *cli) show(title string, d *handler.Delivery, sub *subject) {
	fmt.Fprintln(c.stdout, title)
	now := c.now()
	printRecord(c.stdout, d.Record, now, d.PayloadHash, says(d, now))
}

// before writes rec as it was before the command deleted or replaced it,
// under a title: what a delivery would have met is no longer true, and is
// left out (current says what it meets now).
func (c *cli) before(title string, rec *idempotency.Record) {
	fmt.Fprintln(c.stdout, title)
	printRecord(c.stdout, rec, c.now(), "", "")
}

// gone answers a delete of d's key, which has no record: done already
// (a runbook run twice), when records of the key's prefix are in the
// store; otherwise the key is not one the function writes (a mistyped
// --key, another function name than the deployed one's), which the
// command says, naming the prefixes it found, and fails.
func (c *cli) gone(ctx context.Context, name string, sub *subject, d *handler.Delivery) int {
	prefix, _ := keyPrefix(d.Key)
	seen, err := lookForPrefix(ctx, sub.store, prefix, c.prefixScanLimit)
	if err != nil {
		return c.fail(name, fmt.Errorf("no record of key %s, and the records of its prefix %s cannot be looked for: %w", printable(d.Key), printable(prefix), err))
	}
	if !seen.found {
		return c.fail(name, fmt.Errorf("no record of key %s, and %s: is the key mistyped, or the function's name not the deployed one's?", printable(d.Key), seen.says(prefix)))
	}
	fmt.Fprintf(c.stdout, "no record of key %s: already gone, nothing to delete; %s\n", printable(d.Key), escape(says(d, c.now())))
	return exitOK
}

// current writes what the record of sub is after a write of the command,
// read again: absent, or another record that an invocation wrote since.
func (c *cli) current(ctx context.Context, name string, sub *subject) int {
	d, err := sub.read(ctx)
	switch {
	case err != nil:
		return c.fail(name, fmt.Errorf("the record cannot be read again: %w", err))
	case d.Corrupted != nil:
		fmt.Fprintf(c.stdout, "now the record of key %s cannot be read: %s\n", printable(d.Key), escape(says(d, c.now())))
	case d.Record == nil:
		fmt.Fprintf(c.stdout, "now no record of key %s: %s\n", printable(d.Key), escape(says(d, c.now())))
	default:
		c.show("the record now, written since", d, sub)
	}
	return exitOK
}

// deleteFailed reports a conditional delete that failed with err. A record
// gone by then is what the delete was for, and the delete may well be
// what removed it: a request applied whose reply was lost, retried by the
// client, finds no record and fails its condition. So it is a success,
// as a forget of a record already gone is; else as changed.
func (c *cli) deleteFailed(ctx context.Context, name, what string, sub *subject, err error) int {
	if !errors.Is(err, idempotency.ErrLeaseLost) {
		return c.fail(name, err)
	}
	d, err := sub.read(ctx)
	if err == nil && d.Record == nil && d.Corrupted == nil {
		fmt.Fprintf(c.stdout, "no record of key %s now: deleted, by this request (a retry after a lost reply) or by another meanwhile; %s\n", printable(d.Key), escape(says(d, c.now())))
		return exitOK
	}
	return c.changedTo(name, what, sub, d, err)
}

// changed reports a conditional write that failed with err: when the
// record changed (ErrLeaseLost), what it is now.
func (c *cli) changed(ctx context.Context, name, what string, sub *subject, err error) int {
	if !errors.Is(err, idempotency.ErrLeaseLost) {
		return c.fail(name, err)
	}
	d, err := sub.read(ctx)
	return c.changedTo(name, what, sub, d, err)
}

// changedTo reports d, the record of sub read again (or err, why it could
// not be) after a conditional write failed because it had changed.
func (c *cli) changedTo(name, what string, sub *subject, d *handler.Delivery, err error) int {
	switch {
	case err != nil:
		return c.fail(name, fmt.Errorf("%s: the record changed meanwhile, and cannot be read now: %w", what, err))
	case d.Record == nil:
		return c.fail(name, fmt.Errorf("%s: the record was deleted meanwhile", what))
	}
	c.show("the record now", d, sub)
	return c.fail(name, fmt.Errorf("%s: the record changed meanwhile", what))
}
