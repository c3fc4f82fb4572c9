package golden

import (
	"strings"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Case is an invocation whose writes are golden files, as every store
// writes them.
type Case struct {
	Name string
	Opts []idempotency.Option
	Fn   Func
	// Writes names the golden file of each record the invocation writes,
	// in order; "" leaves one out (a record another case has already).
	Writes []string
	// Dups are what duplicates get from each file: loaded into the
	// store, each event in turn must get its outcome.
	Dups map[string][]Dup
}

// Dup is a duplicate's event, and what it must get.
type Dup struct{ Event, Want string }

// Keyed is the key of the golden events: the order id.
var Keyed = idempotency.WithEventKey("order_id")

// Validated checks a duplicate's amount and currency.
var Validated = idempotency.WithPayloadValidation("[amount,currency]")

// Cases are the records of every store: each status, with and without a
// payload hash, the lease of AbandonBlock, and a response too large for
// the store (over 400 KiB, the limit of both DynamoDB and the Redis
// store's default).
var Cases = []Case{{
	Name:   "plain",
	Opts:   []idempotency.Option{Keyed},
	Fn:     Respond(Receipt("ord-plain")),
	Writes: []string{"inprogress.json", "completed.json"},
	Dups: map[string][]Dup{
		"inprogress.json": {{Order("ord-plain", 12.5), InProgress}},
		"completed.json":  {{Order("ord-plain", 12.5), Replay(Receipt("ord-plain"))}},
	},
}, {
	Name:   "validation",
	Opts:   []idempotency.Option{Keyed, Validated},
	Fn:     Respond(Receipt("ord-validation")),
	Writes: []string{"inprogress-validation.json", "completed-validation.json"},
	Dups: map[string][]Dup{
		"inprogress-validation.json": {{Order("ord-validation", 99), Conflict}, {Order("ord-validation", 12.5), InProgress}},
		"completed-validation.json":  {{Order("ord-validation", 99), Conflict}, {Order("ord-validation", 12.5), Replay(Receipt("ord-validation"))}},
	},
}, {
	Name:   "uncertain",
	Opts:   []idempotency.Option{Keyed},
	Fn:     Unsure,
	Writes: []string{"", "uncertain.json"},
	Dups: map[string][]Dup{
		"uncertain.json": {{Order("ord-uncertain", 12.5), "UncertainError lease_end=-"}},
	},
}, {
	// Under AbandonBlock the lease lasts until expiry, and the record
	// keeps the invocation's deadline.
	Name:   "abandon-block",
	Opts:   []idempotency.Option{Keyed, idempotency.WithAbandonPolicy(idempotency.AbandonBlock)},
	Fn:     Respond(Receipt("ord-abandon-block")),
	Writes: []string{"inprogress-abandon-block.json", ""},
	Dups: map[string][]Dup{
		"inprogress-abandon-block.json": {{Order("ord-abandon-block", 12.5), InProgress}},
	},
}, {
	// The record is completed without the response.
	Name:   "response-omitted",
	Opts:   []idempotency.Option{Keyed},
	Fn:     Respond(`"` + strings.Repeat("x", 400*1024) + `"`),
	Writes: []string{"", "completed-response-omitted.json"},
	Dups: map[string][]Dup{
		"completed-response-omitted.json": {{Order("ord-response-omitted", 12.5), `ResponseNotStoredError reason="too large for the store"`}},
	},
}}

// Event is the event of c's invocation.
func (c Case) Event() string { return Order("ord-"+c.Name, 12.5) }

// Files lists the files that a read test of cases reads.
func Files(cases []Case) []string {
	var files []string
	for _, c := range cases {
		for file := range c.Dups {
			files = append(files, file)
		}
	}
	return files
}
