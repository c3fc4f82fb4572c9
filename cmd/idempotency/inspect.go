package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/handler"
)

const inspectAbout = `Computes the idempotency key of an event as its function does, and shows
the function's settings, each with where it was read, and the record of
that key: status, age, expiry, lease end, lease token, payload hash (and
whether it matches the event's), whether the stored response decodes as
JSON, and what the next delivery of the event meets. With --key instead
of an event, the payload is not checked: the next delivery is one of the
same request.

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
	// Corrupted is why the record of the key cannot be read, when it
	// cannot; Record is then null.
	Corrupted string `json:"corrupted,omitempty"`
	// Next is what the next delivery meets.
	Next verdictView `json:"next"`
	// Response is the stored response, with -response.
	Response *string `json:"response,omitempty"`
}

// settingView is the settings a key was computed with: each the value the
// library is given, and in Sources where it was read.
type settingView struct {
	WrapFunc          string `json:"wrap_func,omitempty"`
	EventKey          string `json:"event_key"`
	PayloadValidation string `json:"payload_validation"`
	// KeyPrefix is the prefix of the key, as the library made it.
	KeyPrefix     string            `json:"key_prefix"`
	KeyRequired   bool              `json:"key_required"`
	ExpiresAfter  string            `json:"expires_after"`
	Compatibility string            `json:"compatibility"`
	Hash          string            `json:"hash"`
	PythonHandler string            `json:"python_handler,omitempty"`
	AbandonPolicy string            `json:"abandon_policy"`
	Sources       map[string]string `json:"sources"`
}

func settingsView(w *handler.Wrapper, key string) settingView {
	v := settingView{ExpiresAfter: w.ExpiresAfter.String(), Sources: map[string]string{}}
	for _, s := range w.Settings {
		v.Sources[s.Name] = s.Source
		switch s.Name {
		case "WrapFunc":
			v.WrapFunc = s.Value
		case "EventKey":
			v.EventKey = s.Value
		case "PayloadValidation":
			v.PayloadValidation = s.Value
		case "KeyPrefix":
			v.KeyPrefix = s.Value
		case "KeyRequired":
			v.KeyRequired = s.Value == "true"
		case "Compatibility":
			v.Compatibility = s.Value
		case "Hash":
			v.Hash = s.Value
		case "PythonHandler":
			v.PythonHandler = s.Value
		case "AbandonPolicy":
			v.AbandonPolicy = s.Value
		}
	}
	if prefix, ok := keyPrefix(key); ok {
		v.KeyPrefix = prefix
	}
	return v
}

// keyPrefix returns the part of key before its last "#": the key prefix,
// as the library wrote it (a hash is hex or base64, without "#").
func keyPrefix(key string) (string, bool) {
	i := strings.LastIndexByte(key, '#')
	if i < 0 {
		return "", false
	}
	return key[:i], true
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
	d, err := sub.read(ctx)
	if err != nil {
		return c.fail("inspect", err)
	}
	fromEvent := sub.event != nil
	rec := d.Record
	out := inspection{Key: d.Key, Settings: settingsView(sub.wrapper, d.Key), EventPayloadHash: d.PayloadHash, Next: verdict(d, now)}
	if d.Corrupted != nil {
		out.Corrupted = d.Corrupted.Error()
	}
	if rec != nil {
		v := view(rec, now, out.Next.Says)
		out.Record = &v
		if fromEvent && d.PayloadHash != "" {
			match := rec.PayloadHash == d.PayloadHash
			out.PayloadHashMatches = &match
		}
		if *showResponse {
			s := string(rec.Response)
			out.Response = &s
		}
	}
	// An event the function refuses before any record is looked up: the
	// answer is shown, and the command did not find a record.
	var refused error
	if d.Key == "" && d.Err != nil {
		refused = fmt.Errorf("the function refuses the event, before any record: %s", out.Next.Says)
	}
	if *asJSON {
		if err := writeJSON(c.stdout, out); err != nil {
			return c.fail("inspect", err)
		}
		if refused != nil {
			return c.fail("inspect", refused)
		}
		return exitOK
	}
	if fromEvent {
		c.printSettings(sub.wrapper, d.Key)
	}
	switch {
	case refused != nil:
		return c.fail("inspect", refused)
	case d.Key == "":
		fmt.Fprintf(c.stdout, "no key: %s\n", escape(out.Next.Says))
		return exitOK
	case d.Corrupted != nil:
		fmt.Fprintf(c.stdout, "the record of key %s cannot be read: %s\n  next delivery  %s\n", printable(d.Key), escape(out.Corrupted), escape(out.Next.Says))
		return exitOK
	case rec == nil:
		fmt.Fprintf(c.stdout, "no record of key %s: %s\n", printable(d.Key), escape(out.Next.Says))
		return exitOK
	}
	fmt.Fprintln(c.stdout, "record")
	next := out.Next.Says
	if !fromEvent && rec.PayloadHash != "" {
		next += " (for a delivery of the same payload: without the event, it is not checked)"
	}
	printRecord(c.stdout, rec, now, d.PayloadHash, next)
	if *showResponse {
		fmt.Fprintf(c.stdout, "response\n%s\n", document(string(rec.Response)))
	}
	return exitOK
}

// printSettings writes the key of an event and the settings it was
// computed with, each with where it was read. The key prefix is the one
// the key has.
func (c *cli) printSettings(w *handler.Wrapper, key string) {
	if key != "" {
		fmt.Fprintf(c.stdout, "key %s\n", printable(key))
	}
	fmt.Fprintln(c.stdout, "  of the event, with the function's settings:")
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	for _, s := range w.Settings {
		value := s.Value
		if s.Name == "KeyPrefix" {
			prefix, ok := keyPrefix(key)
			switch {
			case ok:
				value = prefix
			case value == "":
				continue // the library makes it, and the event has no key to show it
			}
		}
		fmt.Fprintf(tw, "    %s\t%s\t%s\n", s.Name, escape(fmt.Sprintf("%q", value)), escape("from "+s.Source))
	}
	tw.Flush()
}
