package respfault

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Fault is a failure the proxy injects into a command.
type Fault int

// The faults. See the package documentation for what each does.
const (
	ResetBeforeServer Fault = iota + 1
	ReplyLost
	Latency
)

// Faults lists every fault, in declaration order, for tables.
var Faults = []Fault{ResetBeforeServer, ReplyLost, Latency}

func (f Fault) String() string {
	switch f {
	case ResetBeforeServer:
		return "ResetBeforeServer"
	case ReplyLost:
		return "ReplyLost"
	case Latency:
		return "Latency"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Rule chooses the commands that get a fault. The zero values of the
// selectors match everything. Rules are tried in order, and the first that
// fires wins; a command no rule fires on is forwarded untouched.
type Rule struct {
	Fault Fault

	// Command is the command's name ("EVALSHA", "HGETALL"), in any case.
	// "" matches every command.
	Command string
	// Script, when not "", is the SHA-1 (40 hex digits) of a Lua script:
	// the rule then matches EVALSHA and EVALSHA_RO naming it, and EVAL and
	// EVAL_RO sending its source. It tells apart the scripts of a store,
	// which all travel as EVALSHA.
	Script string

	// Times bounds how many commands the rule breaks; 0 means no bound.
	Times int
	// Delay is how long a Latency fault holds the reply.
	Delay time.Duration
}

// rule is a Rule with its counter.
type rule struct {
	Rule
	injected int
}

// matches reports whether the command name (upper case) with its
// arguments (the name excluded) is one the rule selects.
func (r *rule) matches(name string, args [][]byte) bool {
	if r.Command != "" && !strings.EqualFold(r.Command, name) {
		return false
	}
	if r.Script == "" {
		return true
	}
	if len(args) == 0 {
		return false
	}
	switch name {
	case "EVALSHA", "EVALSHA_RO":
		return strings.EqualFold(r.Script, string(args[0]))
	case "EVAL", "EVAL_RO":
		sum := sha1.Sum(args[0])
		return strings.EqualFold(r.Script, hex.EncodeToString(sum[:]))
	}
	return false
}

// fire reports whether a matching command gets the fault, and counts it.
func (r *rule) fire() bool {
	if r.Times > 0 && r.injected >= r.Times {
		return false
	}
	r.injected++
	return true
}
