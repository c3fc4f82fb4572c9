package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

const inspectAbout = `Computes the idempotency key of an event as its function does, and shows
the record of that key: status, age, expiry, lease end, lease token, payload
hash (and whether it matches the event's), whether the stored response
decodes as JSON, and what the next delivery of the event meets.

` + targetAbout + `
Exit status: 0 when the key was computed and looked up (whether or not it
has a record), 1 when it could not be (the function refuses the event or
its settings, or an AWS or Redis error), 2 when the command line, or a
file it names (the template, the event), cannot be read.
`

// inspection is inspect's -json output.
type inspection struct {
	Key      string      `json:"key"`
	Settings settingView `json:"settings"`
	// EventPayloadHash is the event's payload hash, when the key was
	// computed from an event with payload validation on.
	EventPayloadHash string `json:"event_payload_hash,omitempty"`
	// PayloadHashMatches compares it with the record's; null without an
	// event, a record or validation.
	PayloadHashMatches *bool       `json:"payload_hash_matches"`
	Record             *recordView `json:"record"`
	// Response is the stored response, with -response.
	Response *string `json:"response,omitempty"`
}

// settingView is the settings a key was computed with.
type settingView struct {
	WrapFunc          string `json:"wrap_func,omitempty"`
	EventKey          string `json:"event_key"`
	PayloadValidation string `json:"payload_validation"`
	KeyPrefix         string `json:"key_prefix"`
	KeyRequired       bool   `json:"key_required"`
	ExpiresAfter      string `json:"expires_after"`
}

func settingsView(s template.Settings) settingView {
	return settingView{
		WrapFunc:          s.WrapFunc,
		EventKey:          s.EventKey,
		PayloadValidation: s.PayloadValidation,
		KeyPrefix:         s.KeyPrefix,
		KeyRequired:       s.KeyRequired,
		ExpiresAfter:      s.ExpiresAfter.String(),
	}
}

func (c *cli) inspect(ctx context.Context, args []string) int {
	fs := c.flags("inspect", "[flags] [EVENT_FILE]", inspectAbout)
	var t target
	t.register(fs)
	asJSON := fs.Bool("json", false, "write one JSON object instead of text")
	showResponse := fs.Bool("response", false, "write the stored response too")
	if status, ok := c.parse(fs, args, 0, 1); !ok {
		return status
	}
	if err := t.where.check(fs); err != nil {
		return c.usageError("inspect", "%v", err)
	}
	sub, err := c.subject(ctx, &t, fs.Args())
	if err != nil {
		return c.fail("inspect", err)
	}
	defer sub.store.close()
	now := c.now()
	rec, err := sub.store.Get(ctx, sub.key)
	if errors.Is(err, idempotency.ErrRecordNotFound) {
		rec, err = nil, nil
	}
	if err != nil {
		return c.fail("inspect", err)
	}
	out := inspection{Key: sub.key, Settings: settingsView(sub.settings), EventPayloadHash: sub.hash}
	if rec != nil {
		v := view(rec, now, sub.settings.ExpiresAfter)
		out.Record = &v
		if sub.fromEvent && sub.settings.PayloadValidation != "" {
			match := rec.PayloadHash == sub.hash
			out.PayloadHashMatches = &match
		}
		if *showResponse {
			s := string(rec.Response)
			out.Response = &s
		}
	}
	if *asJSON {
		if err := writeJSON(c.stdout, out); err != nil {
			return c.fail("inspect", err)
		}
		return exitOK
	}
	s := sub.settings
	if sub.fromEvent {
		fmt.Fprintf(c.stdout, "key %s\n  of the event, with key prefix %q, event key %q, payload validation %q\n", printable(sub.key), s.KeyPrefix, s.EventKey, s.PayloadValidation)
	}
	if rec == nil {
		fmt.Fprintf(c.stdout, "no record of key %s: the next delivery runs the handler\n", printable(sub.key))
		return exitOK
	}
	fmt.Fprintln(c.stdout, "record")
	hash := ""
	if sub.fromEvent && s.PayloadValidation != "" {
		hash = sub.hash
	}
	printRecord(c.stdout, rec, now, s.ExpiresAfter, hash, next(rec, now))
	if *showResponse {
		fmt.Fprintf(c.stdout, "response\n%s\n", escape(string(rec.Response)))
	}
	return exitOK
}
