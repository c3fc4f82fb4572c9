package respfault

import "maps"

// Injection is one kind of injected fault: a fault on a command.
type Injection struct {
	Command string
	Fault   Fault
}

// Counts are what the proxy saw.
type Counts struct {
	// Commands counts the commands the proxy received, by upper-case
	// name, the client's retries included.
	Commands map[string]int
	// Forwarded counts the commands that reached the server, by name:
	// those with no fault, with Latency and with ReplyLost.
	Forwarded map[string]int
	// Injected counts the faults injected.
	Injected map[Injection]int
}

func newCounts() Counts {
	return Counts{Commands: map[string]int{}, Forwarded: map[string]int{}, Injected: map[Injection]int{}}
}

func (c Counts) clone() Counts {
	return Counts{Commands: maps.Clone(c.Commands), Forwarded: maps.Clone(c.Forwarded), Injected: maps.Clone(c.Injected)}
}

// InjectedFault is the number of times f was injected, on any command.
func (c Counts) InjectedFault(f Fault) int {
	n := 0
	for k, v := range c.Injected {
		if k.Fault == f {
			n += v
		}
	}
	return n
}
