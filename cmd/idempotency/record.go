package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// recordView is a record as the commands show it, and as their -json
// output writes it.
type recordView struct {
	Key    string `json:"key"`
	Status string `json:"status"`
	// Live reports whether the record holds its key now (see
	// idempotency.Record.Live).
	Live bool `json:"live"`
	// AgeSeconds is how long ago the record was written (COMPLETED: when
	// it completed), derived from its expiry and the function's expiry
	// setting when it does not say; null when neither tells.
	AgeSeconds      *int64 `json:"age_seconds"`
	Expiry          string `json:"expiry,omitempty"`
	LeaseEnd        string `json:"lease_end,omitempty"`
	LeaseToken      string `json:"lease_token,omitempty"`
	PayloadHash     string `json:"payload_hash,omitempty"`
	CompletedAt     string `json:"completed_at,omitempty"`
	ResponseBytes   int    `json:"response_bytes"`
	ResponseJSON    bool   `json:"response_json"`
	ResponseOmitted bool   `json:"response_omitted,omitempty"`
	// Next is what the next delivery of the event meets (see says).
	Next string `json:"next"`
}

// view returns rec as the commands show it at now; expiresAfter is the
// function's record expiry, from which a record's age is derived, and
// next what the next delivery meets.
func view(rec *idempotency.Record, now time.Time, expiresAfter time.Duration, next string) recordView {
	v := recordView{
		Key:             rec.Key,
		Status:          string(rec.Status),
		Live:            rec.Live(now),
		Expiry:          timestamp(rec.Expiry),
		LeaseEnd:        timestamp(rec.LeaseEnd),
		LeaseToken:      rec.LeaseToken,
		PayloadHash:     rec.PayloadHash,
		CompletedAt:     timestamp(rec.CompletedAt),
		ResponseBytes:   len(rec.Response),
		ResponseJSON:    len(rec.Response) > 0 && json.Valid(rec.Response),
		ResponseOmitted: rec.ResponseOmitted,
		Next:            next,
	}
	if age, ok := recordAge(rec, now, expiresAfter); ok {
		s := int64(age / time.Second)
		v.AgeSeconds = &s
	}
	return v
}

// recordAge returns how long ago rec was written: when it completed, for a
// record that says, else its expiry less the expiry setting (every record
// the middleware writes expires that long after it is written).
func recordAge(rec *idempotency.Record, now time.Time, expiresAfter time.Duration) (time.Duration, bool) {
	switch {
	case !rec.CompletedAt.IsZero():
		return now.Sub(rec.CompletedAt), true
	case !rec.Expiry.IsZero():
		return now.Sub(rec.Expiry.Add(-expiresAfter)), true
	}
	return 0, false
}

func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// printRecord writes rec for a person: one field a line, times with how
// far they are from now. eventHash, when not empty, is the payload hash of
// the event the record was looked up by; nextDelivery, when not empty,
// what the next delivery of it meets.
func printRecord(w io.Writer, rec *idempotency.Record, now time.Time, expiresAfter time.Duration, eventHash, nextDelivery string) {
	v := view(rec, now, expiresAfter, nextDelivery)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	field := func(name, format string, args ...any) {
		fmt.Fprintf(tw, "  %s\t%s\n", name, escape(fmt.Sprintf(format, args...)))
	}
	field("key", "%s", printable(v.Key))
	field("status", "%s", printable(v.Status))
	if age, ok := recordAge(rec, now, expiresAfter); ok {
		field("age", "%s", age.Round(time.Second))
	}
	field("expiry", "%s", when(rec.Expiry, now))
	if !rec.LeaseEnd.IsZero() {
		field("lease end", "%s", when(rec.LeaseEnd, now))
	}
	field("lease token", "%s", orNone(printable(v.LeaseToken)))
	switch {
	case eventHash == "" && v.PayloadHash == "":
		field("payload hash", "none")
	case eventHash == "":
		field("payload hash", "%s", printable(v.PayloadHash))
	case eventHash == v.PayloadHash:
		field("payload hash", "%s (matches the event's)", printable(v.PayloadHash))
	default:
		field("payload hash", "%s (the event's is %s)", orNone(printable(v.PayloadHash)), eventHash)
	}
	switch {
	case rec.ResponseOmitted:
		field("response", "not stored (too large)")
	case v.ResponseBytes == 0:
		field("response", "none")
	case v.ResponseJSON:
		field("response", "%d bytes, decodes as JSON", v.ResponseBytes)
	default:
		field("response", "%d bytes, does NOT decode as JSON", v.ResponseBytes)
	}
	if nextDelivery != "" {
		field("next delivery", "%s", nextDelivery)
	}
	tw.Flush()
}

// when writes t with its distance from now: "2025-01-02T03:04:05Z (in
// 55m0s)".
func when(t, now time.Time) string {
	if t.IsZero() {
		return "none"
	}
	d := t.Sub(now).Round(time.Second)
	if d >= 0 {
		return fmt.Sprintf("%s (in %s)", timestamp(t), d)
	}
	return fmt.Sprintf("%s (%s ago)", timestamp(t), -d)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
