package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

const resolveAbout = `Settles an UNCERTAIN record once you know from the downstream what
happened (docs/uncertain-outcomes.md):

  --completed --response FILE   the effect happened: the record becomes
                                COMPLETED with FILE's JSON as its response,
                                which every later delivery gets, as if the
                                handler had returned it
  --failed                      it did not: the record is deleted, and the
                                next delivery runs the handler

Like forget, it reads the record, shows it, and writes only if it is still
the UNCERTAIN record shown (conditioned on its status and lease token), and
refuses one that an invocation is reconciling unless --force. The response
must be what the handler's result encodes to (encoding/json; it is stored
compacted): a Handler's duplicates get these bytes as they are, and a
function wrapper's (WrapFunc), or a Handler's with WithReplayHook, decode
them into the result type, where a response that does not decode is a
*CorruptedRecordError.

A record that is already gone is settled for --failed, which says so and
succeeds, as forget does; for --completed, it is an error: there is no
record to complete.

` + targetAbout + `
Exit status: 0 when the record was settled (with --failed, also when it
was already gone), 1 when it was not (refused, changed, absent, or an AWS
or Redis error), 2 when the command line, or a file it names, cannot be
read.
`

func (c *cli) resolve(ctx context.Context, args []string) int {
	fs := c.flags("resolve", "[flags] (--completed --response FILE | --failed) [EVENT_FILE]", resolveAbout)
	var t target
	t.register(fs)
	var want expectation
	want.register(fs)
	completed := fs.Bool("completed", false, "the effect happened: complete the record with --response")
	failed := fs.Bool("failed", false, "the effect did not happen: delete the record")
	responseFile := fs.String("response", "", "the `file` holding the response (JSON) of --completed; - for standard input")
	if status, ok := c.parse(fs, args, 0, 1); !ok {
		return status
	}
	if err := t.where.check(fs); err != nil {
		return c.usageError("resolve", "%v", err)
	}
	if err := want.parse(); err != nil {
		return c.usageError("resolve", "%v", err)
	}
	if *completed == *failed {
		return c.usageError("resolve", "give one of --completed and --failed")
	}
	var response []byte
	if *completed {
		if *responseFile == "" {
			return c.usageError("resolve", "--completed needs --response FILE, the handler's response as JSON")
		}
		raw, err := c.readEvent(*responseFile)
		if err != nil {
			return c.fail("resolve", badInput(err))
		}
		// Stored as the handler's encoder writes it: compact, no newline.
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return c.usageError("resolve", "--response %s is not JSON: %v", *responseFile, err)
		}
		response = buf.Bytes()
	} else if *responseFile != "" {
		return c.usageError("resolve", "--response goes with --completed")
	}

	sub, err := c.subject(ctx, &t, fs.Args())
	if err != nil {
		return c.fail("resolve", err)
	}
	defer sub.store.close()
	d, err := sub.read(ctx)
	if err == nil {
		err = sub.keyed(d, c.now)
	}
	if err != nil {
		return c.fail("resolve", err)
	}
	rec := d.Record
	switch {
	case d.Corrupted != nil:
		return c.fail("resolve", fmt.Errorf("the record of key %s cannot be read (%v): there is nothing to resolve ('forget --force' deletes it)", printable(d.Key), d.Corrupted))
	case rec == nil && *failed:
		return c.gone(ctx, "resolve", sub, d)
	case rec == nil:
		return c.fail("resolve", fmt.Errorf("no record of key %s: there is nothing to complete", d.Key))
	case rec.Status != idempotency.StatusUncertain:
		c.show("the record", d, sub)
		return c.fail("resolve", fmt.Errorf("the record is %s, not UNCERTAIN: there is nothing to resolve (forget deletes a record of any status)", rec.Status))
	}
	if err := want.check(rec, c); err != nil {
		c.show("the record", d, sub)
		return c.fail("resolve", err)
	}
	if *failed {
		if err := sub.store.Delete(ctx, rec); err != nil {
			return c.deleteFailed(ctx, "resolve", "not resolved", sub, err)
		}
		c.before("resolved as failed: deleted", rec)
		return c.current(ctx, "resolve", sub)
	}
	now := c.now()
	done := &idempotency.Record{
		Key:         rec.Key,
		Status:      idempotency.StatusComplete,
		Expiry:      now.Add(sub.wrapper.ExpiresAfter),
		LeaseToken:  newToken(),
		Response:    response,
		PayloadHash: rec.PayloadHash,
		CompletedAt: now,
	}
	// Reclaim writes over an UNCERTAIN record with the token read, and no
	// other: what the library does when a reconcile function finds that
	// the effect happened.
	if err := sub.store.Reclaim(sub.wrapper.InMode(ctx), done, rec.LeaseToken); err != nil {
		if errors.Is(err, idempotency.ErrRecordTooLarge) {
			return c.fail("resolve", err)
		}
		return c.changed(ctx, "resolve", "not resolved", sub, err)
	}
	c.before("was", rec)
	// As stored (the expiry in seconds, the times in milliseconds), and
	// what a delivery meets now.
	d, err = sub.read(ctx)
	if err != nil || d.Record == nil {
		return c.fail("resolve", fmt.Errorf("resolved as completed, but the record cannot be read again: %v", err))
	}
	c.show("resolved as completed", d, sub)
	return exitOK
}

// newToken returns a lease token for a record the operator writes: 32 hex
// digits, as the library's, from crypto/rand.
func newToken() string {
	var b [16]byte
	rand.Read(b[:]) // never fails since Go 1.24: it crashes the program instead
	return hex.EncodeToString(b[:])
}
