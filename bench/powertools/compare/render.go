package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// row is one cell of the table: the median of the runs.
type row struct {
	impl, store, scenario string
	callsPerSec           float64
	cpuMicros             float64
	cpuMicrosMin          float64 // the least of the runs
	reqPerCall            float64
	version               string
	commands              map[string]float64 // per call, by name (Redis)
}

func summarize(name, store, scenario string, ms []measurement) row {
	values := func(f func(measurement) float64) []float64 {
		v := make([]float64, len(ms))
		for i, m := range ms {
			v[i] = f(m)
		}
		slices.Sort(v)
		return v
	}
	median := func(f func(measurement) float64) float64 { v := values(f); return v[len(v)/2] }
	cpu := values(func(m measurement) float64 { return 1e6 * m.CPUSeconds / float64(m.Calls) })
	return row{
		impl: name, store: store, scenario: scenario, version: ms[0].Version,
		callsPerSec:  median(func(m measurement) float64 { return float64(m.Calls) / m.Seconds }),
		cpuMicros:    cpu[len(cpu)/2],
		cpuMicrosMin: cpu[0],
		reqPerCall:   median(func(m measurement) float64 { return float64(m.requests) / float64(m.Calls) }),
	}
}

var scenarioNames = map[string]string{"new": "new keys", "dup": "duplicates", "cache": "duplicates, local cache on"}

func render(rows []row, nDynamo, nMemory, repeat int) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## Side by side with Powertools\n\n")
	w("Written by `make bench-compare` (bench/powertools/compare); do not edit by hand.\n\n")
	w("The same trivial handler (`{\"id\", \"amount\", \"currency\"}` in, `{\"ok\", \"id\"}` out, key `id`) wrapped by each\n")
	w("library and called in a loop in one process with a fake Lambda context: on DynamoDB (moto server, every request\n")
	w("counted by internal/testing/faultproxy with no fault), and on a minimal in-memory store (ours: idempotencytest; for\n")
	w("Powertools, the small layers in bench/powertools). CPU time is the process's user+system time over the measured\n")
	w("calls only. Every call starts from the event as JSON text and ends with the response as JSON text, as a Lambda\n")
	w("runtime receives and returns them: Go's Invoke decodes and encodes, as aws-lambda-go does; for Python and\n")
	w("TypeScript the bench parses the event and serializes the response around the handler, as their runtimes do.\n")
	w("Median of %d runs of %d calls ", repeat, nMemory)
	w("(in memory) or %d calls (DynamoDB) per cell.\n\n", nDynamo)
	w("| store | path | implementation | calls/s | CPU µs/call | DynamoDB requests/call |\n|---|---|---|---:|---:|---:|\n")
	for _, r := range rows {
		w("| %s | %s | %s | %.0f | %.1f | %.2f |\n", r.store, scenarioNames[r.scenario], r.impl, r.callsPerSec, r.cpuMicros, r.reqPerCall)
	}
	w("\nThe rows %q (the same DynamoDB requests made with aws-sdk-go-v2 and nothing else) and %q\n", floorName, bareName)
	w("(the handler with no idempotency: the event decoded, the handler called, the reply encoded, as aws-lambda-go does)\n")
	w("are floors, not libraries: what any Go library on that store pays before doing anything of its own.\n\n")
	w("CPU time per call, Powertools ÷ ours, and whether our DynamoDB requests per call are at most theirs (the\n")
	w("target: on every path). The last two columns divide by the floor instead: the most that any Go library could\n")
	w("reach on that path.\n\n")
	w("| store | path | Python ÷ Go | TypeScript ÷ Go | requests at most theirs | Python ÷ floor | TypeScript ÷ floor |\n")
	w("|---|---|---:|---:|---|---:|---:|\n")
	var moreRequests []string
	for _, r := range rows {
		if r.impl != ourName {
			continue
		}
		var py, ts, floor float64
		fewer := true
		for _, o := range rows {
			if o.store != r.store || o.scenario != r.scenario || o.impl == r.impl {
				continue
			}
			switch {
			case o.impl == floorName, o.impl == bareName:
				floor = o.cpuMicros
				continue
			case strings.Contains(o.impl, "Python"):
				py = o.cpuMicros / r.cpuMicros
			default:
				ts = o.cpuMicros / r.cpuMicros
			}
			if r.reqPerCall > o.reqPerCall {
				fewer = false
			}
		}
		if !fewer {
			moreRequests = append(moreRequests, r.store+", "+scenarioNames[r.scenario])
		}
		verdict := "yes"
		if !fewer {
			verdict = "**no**"
		}
		pyFloor, tsFloor := "", ""
		if floor > 0 {
			pyFloor = fmt.Sprintf("%.1f", py*r.cpuMicros/floor)
			tsFloor = fmt.Sprintf("%.1f", ts*r.cpuMicros/floor)
		}
		w("| %s | %s | %.1f | %.1f | %s | %s | %s |\n", r.store, scenarioNames[r.scenario], py, ts, verdict, pyFloor, tsFloor)
	}
	w("\n")
	if len(moreRequests) == 0 {
		w("Requests: at most Powertools' on every path, as measured by the proxy.\n")
	} else {
		w("Requests: **more than Powertools' on %s**.\n", strings.Join(moreRequests, "; "))
	}
	w("\nVersions:\n\n")
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.impl] {
			seen[r.impl] = true
			w("- %s: %s\n", r.impl, r.version)
		}
	}
	w("- moto server (serialized, scripts/moto-serialized.py) from scripts/tools.sh\n")
	w("\nMachine: %s, %d CPUs, load average at the end of the run %s; %s %s/%s.\n", cpuModel(), runtime.NumCPU(), loadAverage(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	w("On a loaded machine calls/s (wall time) moves with the other work; CPU µs/call moves less, but by up to a factor\n")
	w("of two between runs here for the in-memory cells, whose calls take a few microseconds. On DynamoDB the\n")
	w("calls/s are moto's speed (one request at a time, in Python), not DynamoDB's.\n\n")
	w("Command: `go run ./powertools/compare %s` in bench/, under scripts/with-servers.sh (%s); `make bench-compare`\n", strings.Join(os.Args[1:], " "), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	w("runs it with `-root ..` alone.\n\n")
	return b.String()
}

func cpuModel() string {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
