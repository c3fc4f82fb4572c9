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
	// AgeSeconds is what the record says of its age (see recordAge);
	// null when it does not say.
	AgeSeconds *int64 `json:"age_seconds"`
	Expiry     string `json:"expiry,omitempty"`
	LeaseEnd   string `json:"lease_end,omitempty"`
	// Deadline is the deadline of the invocation holding an INPROGRESS
	// record, which such a record keeps when the function's abandon
	// policy holds the key past it.
	Deadline        string `json:"deadline,omitempty"`
	LeaseToken      string `json:"lease_token,omitempty"`
	PayloadHash     string `json:"payload_hash,omitempty"`
	CompletedAt     string `json:"completed_at,omitempty"`
	ResponseBytes   int    `json:"response_bytes"`
	ResponseJSON    bool   `json:"response_json"`
	ResponseOmitted bool   `json:"response_omitted,omitempty"`
	// Next is what the next delivery of the event meets (see says).
	Next string `json:"next"`
}

// view returns rec as the commands show it at now; next is what the next
// delivery meets.
func view(rec *idempotency.Record, now time.Time, next string) recordView {
	v := recordView{
		Key:             rec.Key,
		Status:          string(rec.Status),
		Live:            rec.Live(now),
		Expiry:          timestamp(rec.Expiry),
		LeaseEnd:        timestamp(rec.LeaseEnd),
		Deadline:        timestamp(rec.Deadline),
		LeaseToken:      rec.LeaseToken,
		PayloadHash:     rec.PayloadHash,
		CompletedAt:     timestamp(rec.CompletedAt),
		ResponseBytes:   len(rec.Response),
		ResponseJSON:    len(rec.Response) > 0 && json.Valid(rec.Response),
		ResponseOmitted: rec.ResponseOmitted,
		Next:            next,
	}
	if age, ok := recordAge(rec, now); ok {
		s := int64(age / time.Second)
		v.AgeSeconds = &s
	}
	return v
}

// recordAge returns what rec itself says of its age: for a COMPLETED
// record, the time since it completed; for an INPROGRESS record whose
// invocation has ended (stuck), the time since it ended. The others, and
// records of writers that keep no completion time, do not say: an age
// guessed from the expiry would need the writer's expiry setting, which a
// table shared by functions does not have.
func recordAge(rec *idempotency.Record, now time.Time) (time.Duration, bool) {
	switch {
	case !rec.CompletedAt.IsZero():
		return now.Sub(rec.CompletedAt), true
	case stuck(rec, now):
		return now.Sub(invocationEnd(rec)), true
	}
	return 0, false
}

// invocationEnd is when the invocation holding the INPROGRESS record rec
// is gone, as the library takes it: when its lease ends, or, for a record
// that keeps its invocation's deadline, idempotency.AbandonGrace after
// that deadline.
func invocationEnd(rec *idempotency.Record) time.Time {
	if !rec.Deadline.IsZero() {
		return rec.Deadline.Add(idempotency.AbandonGrace)
	}
	return rec.LeaseEnd
}

// stuck reports whether rec, at now, is an INPROGRESS record whose
// invocation has ended without completing or releasing it: the next
// delivery takes it over, or, under a policy that holds the key, finds
// it abandoned.
func stuck(rec *idempotency.Record, now time.Time) bool {
	return rec.Status == idempotency.StatusInProgress && !now.Before(invocationEnd(rec))
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
func printRecord(w io.Writer, rec *idempotency.Record, now time.Time, eventHash, nextDelivery string) {
	v := view(rec, now, nextDelivery)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	field := func(name, format string, args ...any) {
		fmt.Fprintf(tw, "  %s\t%s\n", name, escape(fmt.Sprintf(format, args...)))
	}
	field("key", "%s", printable(v.Key))
	field("status", "%s", printable(v.Status))
	if age, ok := recordAge(rec, now); ok {
		field("age", "%s", age.Round(time.Second))
	}
	field("expiry", "%s", when(rec.Expiry, now))
	if !rec.LeaseEnd.IsZero() {
		field("lease end", "%s", when(rec.LeaseEnd, now))
	}
	if !rec.Deadline.IsZero() {
		field("deadline", "%s (its invocation's; the lease holds the key past it)", when(rec.Deadline, now))
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
