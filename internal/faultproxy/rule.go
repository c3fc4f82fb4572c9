package faultproxy

import (
	"bytes"
	"fmt"
	"time"
)

// Fault is a failure the proxy injects into a request.
type Fault int

// The faults. See the package documentation for what each does.
const (
	Throttling Fault = iota + 1
	ProvisionedThroughputExceeded
	InternalServerError
	Latency
	ResetBeforeServer
	ReplyLost
)

// Faults lists every fault, in declaration order, for tables.
var Faults = []Fault{Throttling, ProvisionedThroughputExceeded, InternalServerError, Latency, ResetBeforeServer, ReplyLost}

func (f Fault) String() string {
	switch f {
	case Throttling:
		return "Throttling"
	case ProvisionedThroughputExceeded:
		return "ProvisionedThroughputExceeded"
	case InternalServerError:
		return "InternalServerError"
	case Latency:
		return "Latency"
	case ResetBeforeServer:
		return "ResetBeforeServer"
	case ReplyLost:
		return "ReplyLost"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Rule chooses the requests that get a fault. The zero values of the
// selectors match everything: a Rule{Fault: Throttling} throttles every
// request. Rules are tried in order, and the first that fires wins; a
// request no rule fires on is forwarded untouched.
type Rule struct {
	Fault Fault

	// Op is the DynamoDB operation, as named after the dot of the
	// X-Amz-Target header ("PutItem", "DeleteItem", "GetItem"). "" matches
	// every operation.
	Op string
	// BodyContains, when not "", must occur in the request body: it tells
	// apart requests of one operation, such as the conditional put that
	// takes a key from the one that completes it.
	BodyContains string

	// Skip lets the first Skip matching requests through untouched.
	Skip int
	// Times bounds how many requests the rule breaks; 0 means no bound.
	Times int
	// Rate, when in (0, 1), breaks that fraction of the matching requests
	// (after Skip), drawn from the proxy's seeded source. 0 or 1: all.
	Rate float64

	// Delay is how long a Latency fault holds the request.
	Delay time.Duration

	// Then, when set, runs each time the rule fires, just before the
	// proxy answers the client or drops the connection: for ReplyLost,
	// after the server has applied the request. A test uses it to act at
	// that exact moment, such as killing the process that sent the
	// request.
	Then func()
}

// rule is a Rule with its counters.
type rule struct {
	Rule
	matched  int // matching requests seen
	injected int
}

// matches reports whether the request is one the rule selects.
func (r *rule) matches(op string, body []byte) bool {
	if r.Op != "" && r.Op != op {
		return false
	}
	return r.BodyContains == "" || bytes.Contains(body, []byte(r.BodyContains))
}

// fire counts a matching request and reports whether it gets the fault.
// draw gives a number in [0, 1); it is called only for rules with a rate.
func (r *rule) fire(draw func() float64) bool {
	r.matched++
	if r.matched <= r.Skip {
		return false
	}
	if r.Times > 0 && r.injected >= r.Times {
		return false
	}
	if r.Rate > 0 && r.Rate < 1 && draw() >= r.Rate {
		return false
	}
	r.injected++
	return true
}

func (r Rule) then() {
	if r.Then != nil {
		r.Then()
	}
}
