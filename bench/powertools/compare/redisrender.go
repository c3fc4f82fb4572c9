package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

func renderRedis(rows []row, n, nCache, repeat int, server string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## Side by side with Powertools on Redis (Valkey)\n\n")
	w("Written by `make bench-compare` (bench/powertools/compare, redis.go); do not edit by hand.\n\n")
	w("The handler, the events and the paths of \"Side by side with Powertools\", on one Valkey server (the one\n")
	w("scripts/with-servers.sh starts, its database %d): ours is redis on a go-redis client; Powertools Python's\n", benchDB)
	w("CachePersistenceLayer (RedisCachePersistenceLayer) on a redis-py client and Powertools TypeScript's\n")
	w("CachePersistenceLayer on an @redis/client client, each made as its documentation shows, with its defaults.\n")
	w("CPU time is the process's user+system time over the measured calls only; every call starts from the event as\n")
	w("JSON text and ends with the response as JSON text. Each cell is %d runs of %d calls (%d with the local cache,\n", repeat, n, nCache)
	w("whose calls take a few microseconds); on each path the\n")
	w("implementations take turns, one run each, round after round, so that a change in the machine's load falls on\n")
	w("all of them. CPU µs/call is the median of the runs, and the least of them beside it.\n\n")
	w("Round trips are counted by the server, the same way for every implementation: each cell runs once more with\n")
	w("Valkey's MONITOR on, which shows every command a client sends, and marks those a Lua script runs (not round\n")
	w("trips, not counted). The timed runs have no monitor.\n\n")
	w("| path | implementation | calls/s | CPU µs/call | least | round trips/call | commands per call |\n|---|---|---:|---:|---:|---:|---|\n")
	for _, r := range rows {
		w("| %s | %s | %.0f | %.1f | %.1f | %.2f | %s |\n", scenarioNames[r.scenario], r.impl, r.callsPerSec, r.cpuMicros, r.cpuMicrosMin, r.reqPerCall, commandList(r.commands))
	}
	w("\nThe row %q (gobench -store goredis, bench/powertools/gobench/redisfloor.go) is a floor, not a library:\n", goredisName)
	w("the EVALSHA commands that redis sends on that path, with the same arguments and replies of the same shape,\n")
	w("made with go-redis and nothing else: no event decoded, no key found or hashed, no record, no handler.\n")
	w("The row %q (gobench -store goredis-handler) is that and, on a new key, the handler called as\n", handlerName)
	w("aws-lambda-go calls it (the event decoded, the reply encoded), which our new-key call runs too and which is\n")
	w("no part of the library: what a Go function on go-redis pays with no idempotency. A duplicate runs no handler,\n")
	w("so on that path it is the row above.\n\n")

	w("CPU per call, Powertools ÷ ours, and ours ÷ the floors: \"Go ÷ floor\" divides by go-redis alone, \"Go ÷ floor\n")
	w("with the handler\" by %q. Round trips: never more than theirs.\n\n", handlerName)
	w("| path | Python ÷ Go | TypeScript ÷ Go | Go ÷ floor | Go ÷ floor with the handler | round trips at most theirs |\n")
	w("|---|---:|---:|---:|---:|---|\n")
	var moreTrips []string
	for _, r := range rows {
		if r.impl != ourName {
			continue
		}
		others := map[string]row{}
		for _, o := range rows {
			if o.scenario == r.scenario && o.impl != r.impl {
				others[o.impl] = o
			}
		}
		floor, hasFloor := others[goredisName]
		ofFloor, ofHandler := "", ""
		if hasFloor {
			ofFloor = fmt.Sprintf("%.2f", r.cpuMicros/floor.cpuMicros)
		}
		if h, ok := others[handlerName]; ok {
			ofHandler = fmt.Sprintf("%.2f", r.cpuMicros/h.cpuMicros)
		}
		fewer := true
		for _, name := range []string{pythonName, tsName} {
			if r.reqPerCall > others[name].reqPerCall {
				fewer = false
			}
		}
		trips := "yes"
		if !fewer {
			trips = "**no**"
			moreTrips = append(moreTrips, scenarioNames[r.scenario])
		}
		w("| %s | %.1f | %.1f | %s | %s | %s |\n", scenarioNames[r.scenario],
			others[pythonName].cpuMicros/r.cpuMicros, others[tsName].cpuMicros/r.cpuMicros, ofFloor, ofHandler, trips)
	}
	w("\n")
	if len(moreTrips) == 0 {
		w("Round trips: at most Powertools' on every path, as counted by the server.\n")
	} else {
		w("Round trips: **more than Powertools' on %s**.\n", strings.Join(moreTrips, "; "))
	}
	w("\nVersions:\n\n")
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.impl] {
			seen[r.impl] = true
			w("- %s: %s\n", r.impl, r.version)
		}
	}
	w("- server: %s (scripts/tools.sh)\n", server)
	w("\nMachine: %s, %d CPUs, load average at the end of the run %s; %s %s/%s.\n", cpuModel(), runtime.NumCPU(), loadAverage(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	w("The server runs on the same machine, so calls/s include its work and the loopback's; CPU µs/call is the\n")
	w("measured process's alone.\n\n")
	w("Command: `go run ./powertools/compare %s` in bench/, under scripts/with-servers.sh, after\n", strings.Join(os.Args[1:], " "))
	w("bench/powertools/install.sh (%s). `make bench-compare` runs it with `-root ..` alone: both sections,\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	w("with the defaults.\n\n")
	return b.String()
}

// commandList is "EVALSHA 2.00" or "SET 1.00, GET 1.00": the commands per
// call, the most frequent first.
func commandList(per map[string]float64) string {
	names := make([]string, 0, len(per))
	for name := range per {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		if per[a] != per[b] {
			if per[a] > per[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(names))
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%s %.2f", name, per[name]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
