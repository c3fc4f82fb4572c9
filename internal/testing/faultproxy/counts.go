package faultproxy

import "maps"

// Injection is one kind of injected fault: a fault on an operation.
type Injection struct {
	Op    string
	Fault Fault
}

// Counts are what the proxy saw.
type Counts struct {
	// Requests counts the requests the proxy received, by operation (a
	// Redis command's name in upper case), the client's retries included.
	Requests map[string]int
	// Forwarded counts the requests that reached the server, by
	// operation: those with no fault, with Latency and with ReplyLost.
	Forwarded map[string]int
	// Injected counts the faults injected.
	Injected map[Injection]int
}

func newCounts() Counts {
	return Counts{Requests: map[string]int{}, Forwarded: map[string]int{}, Injected: map[Injection]int{}}
}

func (c Counts) clone() Counts {
	return Counts{Requests: maps.Clone(c.Requests), Forwarded: maps.Clone(c.Forwarded), Injected: maps.Clone(c.Injected)}
}

// Total is the number of requests the proxy received.
func (c Counts) Total() int {
	n := 0
	for _, v := range c.Requests {
		n += v
	}
	return n
}

// InjectedFault is the number of times f was injected, on any operation.
func (c Counts) InjectedFault(f Fault) int {
	n := 0
	for k, v := range c.Injected {
		if k.Fault == f {
			n += v
		}
	}
	return n
}
