package faultproxy

import (
	"bytes"
	"fmt"
	"strings"
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

// HTTPFaults lists every fault of an HTTP proxy, in declaration order, for
// tables.
var HTTPFaults = []Fault{Throttling, ProvisionedThroughputExceeded, InternalServerError, Latency, ResetBeforeServer, ReplyLost}

// RESPFaults lists every fault of a RESP proxy, for tables: those of the
// network, which are all a Redis client meets.
var RESPFaults = []Fault{ResetBeforeServer, ReplyLost, Latency}

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
// selectors match everything: a Rule{Fault: ResetBeforeServer} breaks
// every request. Rules are tried in order, and the first that fires wins;
// a request no rule fires on is forwarded untouched.
type Rule struct {
	Fault Fault

	// Op is the operation, in any case: the DynamoDB operation as named
	// after the dot of the X-Amz-Target header ("PutItem", "GetItem"), or
	// the Redis command ("EVALSHA", "HGETALL"). "" matches every
	// operation.
	Op string
	// BodyContains, when not "", must occur in the request: the HTTP
	// request's body, or the Redis command as sent. It tells apart
	// requests of one operation, such as the conditional put that takes a
	// key from the one that completes it.
	BodyContains string
	// Script, when not "", is the SHA-1 (40 hex digits) of a Lua script:
	// the rule then matches only the Redis commands EVALSHA and EVALSHA_RO
	// naming it, and EVAL and EVAL_RO sending its source. It tells apart
	// the scripts of a store, which all travel as EVALSHA.
	Script string

	// Skip lets the first Skip matching requests through untouched.
	Skip int
	// Times bounds how many requests the rule breaks; 0 means no bound.
	Times int
	// Rate, when in (0, 1), breaks that fraction of the matching requests
	// (after Skip), drawn from the proxy's seeded source. 0 or 1: all.
	Rate float64

	// Delay is how long a Latency fault holds the request (HTTP) or the
	// reply (RESP).
	Delay time.Duration

	// Then, when set, runs each time the rule fires, just before the
	// proxy answers the client or drops the connection: for ReplyLost,
	// after the server has applied the request. A test uses it to act at
	// that exact moment, such as killing the process that sent the
	// request.
	Then func()
}

// request is what the rules see of a request.
type request struct {
	op     string // the DynamoDB operation, or the Redis command in upper case
	body   []byte // the HTTP body, or the Redis command as sent
	script string // the SHA-1 of the script an EVAL or EVALSHA runs, else ""
}

// rule is a Rule with its counters.
type rule struct {
	Rule
	matched  int // matching requests seen
	injected int
}

// matches reports whether the request is one the rule selects.
func (r *rule) matches(req request) bool {
	if r.Op != "" && !strings.EqualFold(r.Op, req.op) {
		return false
	}
	if r.Script != "" && !strings.EqualFold(r.Script, req.script) {
		return false
	}
	return r.BodyContains == "" || bytes.Contains(req.body, []byte(r.BodyContains))
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
