package faultworld

import (
	"time"

	"github.com/gopowertools/lambda/internal/testing/faultproxy"
)

// Proxies are the proxies between a store and its server: one, or one per
// node of a cluster.
type Proxies []*faultproxy.Proxy

// Set sets the rules on every proxy: a key's requests go to one node.
func (ps Proxies) Set(rules ...faultproxy.Rule) {
	for _, p := range ps {
		p.Set(rules...)
	}
}

// ResetCounts resets every proxy's counters.
func (ps Proxies) ResetCounts() {
	for _, p := range ps {
		p.ResetCounts()
	}
}

// Injected is how many times f was injected, by all the proxies.
func (ps Proxies) Injected(f faultproxy.Fault) int {
	n := 0
	for _, p := range ps {
		n += p.Counts().InjectedFault(f)
	}
	return n
}

// Rule is base with fault f on times requests; a Latency holds each for
// 20 ms.
func Rule(base faultproxy.Rule, f faultproxy.Fault, times int) faultproxy.Rule {
	base.Fault, base.Times = f, times
	if f == faultproxy.Latency {
		base.Delay = 20 * time.Millisecond
	}
	return base
}
