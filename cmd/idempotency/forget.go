package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

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

` + targetAbout + `
Exit status: 0 when the record was deleted, 1 when it was not (refused,
changed, absent, or an AWS or Redis error), 2 on a bad command line.
`

// expectation is the record the operator saw: forget and resolve refuse
// to act on another.
type expectation struct {
	token, status string
	force         bool
}

func (e *expectation) register(fs *flag.FlagSet) {
	fs.StringVar(&e.token, "token", "", "act only if the record still has this lease `token` (as shown by inspect or list)")
	fs.StringVar(&e.status, "status", "", "act only if the record still has this `status` (INPROGRESS, COMPLETED, UNCERTAIN)")
	fs.BoolVar(&e.force, "force", false, "act even when an invocation holds a live lease on the record")
}

// check returns why rec, read at now, must not be acted on, or nil.
func (e *expectation) check(rec *idempotency.Record, c *cli) error {
	if e.token != "" && rec.LeaseToken != e.token {
		return fmt.Errorf("the record's lease token is %s, not %s: it is not the record you saw", orNone(rec.LeaseToken), e.token)
	}
	if e.status != "" && !strings.EqualFold(string(rec.Status), e.status) {
		return fmt.Errorf("the record's status is %s, not %s: it is not the record you saw", rec.Status, e.status)
	}
	now := c.now()
	live := rec.Expiry.IsZero() || now.Before(rec.Expiry)
	if live && now.Before(rec.LeaseEnd) && !e.force {
		return fmt.Errorf("an invocation holds a live lease on the record until %s: acting now lets a duplicate run the handler while it still runs; wait, or give --force", when(rec.LeaseEnd, now))
	}
	return nil
}

func (c *cli) forget(ctx context.Context, args []string) int {
	fs := c.flags("forget", "[flags] [EVENT_FILE]", forgetAbout)
	var t target
	t.register(fs)
	var want expectation
	want.register(fs)
	if status, ok := c.parse(fs, args, 0, 1); !ok {
		return status
	}
	if err := t.where.check(fs); err != nil {
		return c.usageError("forget", "%v", err)
	}
	sub, err := c.subject(ctx, &t, fs.Args())
	if err != nil {
		return c.fail("forget", err)
	}
	defer sub.store.close()
	rec, err := sub.store.Get(ctx, sub.key)
	if err != nil {
		return c.fail("forget", err)
	}
	if err := want.check(rec, c); err != nil {
		c.show("the record", rec, sub)
		return c.fail("forget", err)
	}
	if err := sub.store.Delete(ctx, rec); err != nil {
		return c.changed(ctx, "forget", "not deleted", sub, err)
	}
	c.show("deleted", rec, sub)
	return exitOK
}

// show writes rec under a title.
func (c *cli) show(title string, rec *idempotency.Record, sub *subject) {
	fmt.Fprintln(c.stdout, title)
	printRecord(c.stdout, rec, c.now(), sub.settings.ExpiresAfter, "")
}

// changed reports a conditional write that failed with err: when the
// record changed (ErrLeaseLost), what it is now.
func (c *cli) changed(ctx context.Context, name, what string, sub *subject, err error) int {
	if !errors.Is(err, idempotency.ErrLeaseLost) {
		return c.fail(name, err)
	}
	now, err := sub.store.Get(ctx, sub.key)
	switch {
	case errors.Is(err, idempotency.ErrRecordNotFound):
		return c.fail(name, fmt.Errorf("%s: the record was deleted meanwhile", what))
	case err != nil:
		return c.fail(name, fmt.Errorf("%s: the record changed meanwhile, and cannot be read now: %w", what, err))
	}
	c.show("the record now", now, sub)
	return c.fail(name, fmt.Errorf("%s: the record changed meanwhile", what))
}
