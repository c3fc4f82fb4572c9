// Command compare runs the same idempotent handler in three
// implementations, this library (../gobench), Powertools for AWS Lambda
// Python (../python) and TypeScript (../node), against one moto server and
// on an in-memory store, and writes the table into the section "## Side by
// side with Powertools" of docs/benchmarks.md; and on one Valkey server,
// into the section "## Side by side with Powertools on Redis (Valkey)".
// `make bench-compare` runs it with the servers up:
//
//	go run ./powertools/compare -root .. [-sections dynamodb,redis] [-n-dynamodb 200] [-n-memory 20000]
//		[-n-redis 2000] [-n-redis-cache 20000] [-repeat 3] [-doc FILE] [-impls go,python,typescript]
//		[-cpuprofile DIR]
//
// Every DynamoDB request goes through internal/testing/faultproxy, with no fault,
// which counts them: requests per call are measured, not assumed. Redis
// commands are counted at the server. Each measurement is its
// own process; only the N measured calls are timed, after the process has
// prepared (see gobench's doc). On each path the implementations take
// turns, one run each, round after round, so that a change in the
// machine's load (it is shared) falls on all of them alike.
//
// -impls go measures this library and its floors alone, and prints how far
// ours is above each floor without writing the document; -cpuprofile DIR
// keeps a CPU profile of every Go run's measured calls in DIR, named
// for the implementation, store, path and round.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/internal/testing/faultproxy"
)

// impl is one implementation under comparison.
type impl struct {
	name string
	lang string // go, python or typescript: what -impls selects
	cmd  func(args ...string) *exec.Cmd
	// floorOn is set for the floors, which are no library: the store they
	// run on. The AWS SDK for Go alone (gobench -store sdk) runs on
	// DynamoDB, and go-redis alone (gobench -store goredis) on Redis, on
	// the new and dup paths; the handler alone (gobench -store bare) in
	// memory. go-redis and the handler (gobench -store goredis-handler)
	// runs on Redis on the new path only: on dup it is go-redis alone.
	floorOn string
	newOnly bool
}

// The rows of gobench's floors.
const (
	ourName     = "Go (this library)"
	floorName   = "AWS SDK for Go alone"
	bareName    = "Go handler alone"
	goredisName = "go-redis alone"
	handlerName = "go-redis and the Go handler"
	pythonName  = "Powertools Python"
	tsName      = "Powertools TypeScript"
)

// measurement is what one process reported, plus the proxy's count.
type measurement struct {
	Calls      int     `json:"calls"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	Errors     int     `json:"errors"`
	Version    string  `json:"version"`
	// Go's only: what the measured calls allocated, and the collections.
	AllocBytes uint64 `json:"alloc_bytes"`
	Mallocs    uint64 `json:"mallocs"`
	GCs        uint32 `json:"gcs"`
	requests   int
	commands   map[string]int // by command name, when the counter tells them
}

// counter counts the store requests of a measurement's calls: reset
// before them, read after.
type counter interface {
	reset() error
	read(m *measurement) error
}

// proxyCounter counts DynamoDB requests at internal/testing/faultproxy.
type proxyCounter struct{ *faultproxy.Proxy }

func (p proxyCounter) reset() error { p.ResetCounts(); return nil }

func (p proxyCounter) read(m *measurement) error {
	m.requests = p.Counts().Total()
	return nil
}

func main() {
	root := flag.String("root", "..", "the repository's top folder")
	sections := flag.String("sections", "dynamodb,redis", "the sections to run and write: dynamodb (DynamoDB and in memory), redis")
	nDynamo := flag.Int("n-dynamodb", 200, "measured calls per run on DynamoDB (moto)")
	nMemory := flag.Int("n-memory", 20000, "measured calls per run on the in-memory stores")
	nRedis := flag.Int("n-redis", 2000, "measured calls per run on Redis (Valkey)")
	nRedisCache := flag.Int("n-redis-cache", 20000, "measured calls per run on Redis (Valkey) with the local cache")
	repeat := flag.Int("repeat", 3, "runs per cell; the table shows the median")
	doc := flag.String("doc", "", "the file to write the sections into (default: ROOT/docs/benchmarks.md)")
	langs := flag.String("impls", "go,python,typescript", "the implementations to measure, by language; the document is written only when all are")
	flag.StringVar(&profileDir, "cpuprofile", "", "keep a CPU profile of each Go run's measured calls in this folder")
	flag.Parse()
	if err := compare(*root, *doc, *sections, *langs, *nDynamo, *nMemory, *nRedis, *nRedisCache, *repeat); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// profileDir is -cpuprofile, "" for none.
var profileDir string

func compare(root, doc, sections, langs string, nDynamo, nMemory, nRedis, nRedisCache, repeat int) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	if doc == "" {
		doc = filepath.Join(root, "docs/benchmarks.md")
	}
	want := map[string]bool{}
	for _, s := range strings.Split(sections, ",") {
		if s != "dynamodb" && s != "redis" {
			return fmt.Errorf("-sections: unknown section %q (dynamodb, redis)", s)
		}
		want[s] = true
	}
	tmp, err := os.MkdirTemp("", "bench-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	gobench := filepath.Join(tmp, "gobench")
	build := exec.Command("go", "build", "-o", gobench, "./powertools/gobench")
	build.Dir = filepath.Join(root, "bench")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build gobench: %w", err)
	}
	tools := filepath.Join(root, ".tools")
	impls := []impl{
		{name: ourName, lang: "go", cmd: func(args ...string) *exec.Cmd { return exec.Command(gobench, args...) }},
		{name: floorName, lang: "go", floorOn: "dynamodb", cmd: func(args ...string) *exec.Cmd {
			// The same requests with the SDK alone: --store is the last
			// one given, so sdk overrides dynamodb.
			return exec.Command(gobench, append(args, "--store", "sdk")...)
		}},
		{name: goredisName, lang: "go", floorOn: "redis", cmd: func(args ...string) *exec.Cmd {
			return exec.Command(gobench, append(args, "--store", "goredis")...)
		}},
		{name: handlerName, lang: "go", floorOn: "redis", newOnly: true, cmd: func(args ...string) *exec.Cmd {
			return exec.Command(gobench, append(args, "--store", "goredis-handler")...)
		}},
		{name: bareName, lang: "go", floorOn: "memory", cmd: func(args ...string) *exec.Cmd {
			return exec.Command(gobench, append(args, "--store", "bare")...)
		}},
		{name: pythonName, lang: "python", cmd: func(args ...string) *exec.Cmd {
			return exec.Command(filepath.Join(tools, "bench-python/bin/python"),
				append([]string{filepath.Join(root, "bench/powertools/python/bench.py")}, args...)...)
		}},
		{name: tsName, lang: "typescript", cmd: func(args ...string) *exec.Cmd {
			c := exec.Command("node", append([]string{filepath.Join(root, "bench/powertools/node/bench.mjs")}, args...)...)
			c.Env = append(os.Environ(), "BENCH_NODE_MODULES="+filepath.Join(tools, "bench-node"))
			return c
		}},
	}
	selected := map[string]bool{}
	for _, l := range strings.Split(langs, ",") {
		if l != "go" && l != "python" && l != "typescript" {
			return fmt.Errorf("-impls: unknown language %q (go, python, typescript)", l)
		}
		selected[l] = true
	}
	if len(selected) < 3 {
		doc = "" // a partial table would replace the whole one
		impls = slices.DeleteFunc(impls, func(im impl) bool { return !selected[im.lang] })
	}
	if profileDir != "" {
		if err := os.MkdirAll(profileDir, 0o755); err != nil {
			return err
		}
	}
	if want["dynamodb"] {
		if err := compareDynamoDB(root, doc, tmp, impls, nDynamo, nMemory, repeat); err != nil {
			return err
		}
	}
	if want["redis"] {
		if err := compareRedis(doc, impls, nRedis, nRedisCache, repeat); err != nil {
			return err
		}
	}
	return nil
}

// compareDynamoDB measures every implementation on DynamoDB (moto) and in
// memory, counts the system calls of a new key on DynamoDB, times the
// payments example's cold start, and writes the section "## Side by side
// with Powertools".
func compareDynamoDB(root, doc, tmp string, impls []impl, nDynamo, nMemory, repeat int) error {
	moto := os.Getenv("TEST_MOTO_ENDPOINT")
	if moto == "" {
		return fmt.Errorf("TEST_MOTO_ENDPOINT is not set: run under scripts/with-servers.sh (make bench-compare)")
	}
	proxy, err := faultproxy.NewHTTP(moto)
	if err != nil {
		return err
	}
	defer proxy.Close()

	direct := dynamodb.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: aws.CredentialsProviderFunc(
		func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}, nil
		})}, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(moto) })

	var rows []row
	for _, store := range []string{"dynamodb", "memory"} {
		n := nMemory
		if store == "dynamodb" {
			n = nDynamo
		}
		var cell []impl // the implementations measured on this store
		var tables []string
		for _, im := range impls {
			if im.floorOn != "" && im.floorOn != store {
				continue
			}
			table := fmt.Sprintf("bench-compare-%d-%d", len(cell), time.Now().UnixNano())
			if store == "dynamodb" {
				if err := dynamo.CreateTable(context.Background(), direct, func(o *dynamo.Options) { o.TableName = table }); err != nil {
					return fmt.Errorf("create table: %w", err)
				}
			}
			cell, tables = append(cell, im), append(tables, table)
		}
		for _, scenario := range []string{"new", "dup", "cache"} {
			runs := make([][]measurement, len(cell))
			for round := range repeat {
				for i, im := range cell {
					if im.floorOn != "" && scenario == "cache" {
						continue // the same as dup: no record to find
					}
					args := []string{"--store", store, "--scenario", scenario, "--n", fmt.Sprint(n),
						"--endpoint", proxy.URL(), "--table", tables[i]}
					m, err := measure(im, proxyCounter{proxy}, append(args, profileArgs(im, store, scenario, round)...)...)
					if err != nil {
						return fmt.Errorf("%s %s %s: %w", im.name, store, scenario, err)
					}
					runs[i] = append(runs[i], m)
					logMeasurement(im.name, store, scenario, m)
				}
			}
			for i, im := range cell {
				if len(runs[i]) > 0 {
					rows = append(rows, summarize(im.name, store, scenario, runs[i]))
				}
			}
		}
		if store == "dynamodb" {
			for _, table := range tables {
				direct.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
			}
		}
	}
	printAboveFloors(rows)
	if doc == "" {
		return nil
	}
	table := fmt.Sprintf("bench-compare-syscalls-%d", time.Now().UnixNano())
	if err := dynamo.CreateTable(context.Background(), direct, func(o *dynamo.Options) { o.TableName = table }); err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	syscalls, err := countSyscalls(impls, proxy, table, tmp, 50, 250)
	direct.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	if err != nil {
		return fmt.Errorf("system calls: %w", err)
	}
	cs, err := measureColdStart(root, tmp, 10)
	if err != nil {
		return fmt.Errorf("cold start: %w", err)
	}
	section := render(rows, nDynamo, nMemory, repeat) + renderSyscalls(syscalls, 50, 250) + cs.render()
	if err := replaceSection(doc, "## Side by side with Powertools", section); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote the section into %s\n", doc)
	return nil
}

func logMeasurement(name, store, scenario string, m measurement) {
	fmt.Fprintf(os.Stderr, "%-27s %-8s %-5s %6.0f calls/s %7.1f µs CPU/call %.2f req/call",
		name, store, scenario, float64(m.Calls)/m.Seconds, 1e6*m.CPUSeconds/float64(m.Calls), float64(m.requests)/float64(m.Calls))
	if m.Mallocs > 0 {
		fmt.Fprintf(os.Stderr, " %6.0f B/call %4.0f allocs/call %.3f GCs/call",
			float64(m.AllocBytes)/float64(m.Calls), float64(m.Mallocs)/float64(m.Calls), float64(m.GCs)/float64(m.Calls))
	}
	fmt.Fprintln(os.Stderr)
}

// profileArgs asks a Go run for a CPU profile in -cpuprofile's folder.
func profileArgs(im impl, store, scenario string, round int) []string {
	if profileDir == "" || im.lang != "go" {
		return nil
	}
	name := strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(strings.ToLower(im.name))
	return []string{"--cpuprofile", filepath.Join(profileDir, fmt.Sprintf("%s-%s-%s-%d.prof", name, store, scenario, round))}
}

// printAboveFloors prints, for each path, how far ours is above each floor
// measured on it, by the medians of CPU per call.
func printAboveFloors(rows []row) {
	for _, r := range rows {
		if r.impl != ourName {
			continue
		}
		for _, f := range rows {
			if f.store == r.store && f.scenario == r.scenario && f.impl != ourName && f.impl != pythonName && f.impl != tsName {
				fmt.Fprintf(os.Stderr, "%s, %s: ours %.1f µs (%.2f requests), %s %.1f µs (%.2f requests): %+.1f %%\n",
					r.store, scenarioNames[r.scenario], r.cpuMicros, r.reqPerCall, f.impl, f.cpuMicros, f.reqPerCall, 100*(r.cpuMicros/f.cpuMicros-1))
			}
		}
	}
}

// measure runs one process: waits for READY, resets the counter (when
// there is one), lets it run, and reads its result and the count.
func measure(im impl, c counter, args ...string) (measurement, error) {
	cmd := im.cmd(args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return measurement{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return measurement{}, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return measurement{}, err
	}
	defer cmd.Wait() //nolint:errcheck // the error is checked below when it matters
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "READY" {
		cmd.Process.Kill()
		return measurement{}, fmt.Errorf("no READY (got %q, %v): %s", line, err, stderr.String())
	}
	if c != nil {
		if err := c.reset(); err != nil {
			cmd.Process.Kill()
			return measurement{}, err
		}
	}
	io.WriteString(stdin, "GO\n")
	line, err = out.ReadString('\n')
	if err != nil {
		return measurement{}, fmt.Errorf("no result (%v): %s", err, stderr.String())
	}
	var m measurement
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return measurement{}, fmt.Errorf("result %q: %w", line, err)
	}
	if c != nil {
		if err := c.read(&m); err != nil {
			return measurement{}, err
		}
	}
	if m.Errors > 0 {
		return measurement{}, fmt.Errorf("%d of %d calls failed: %s", m.Errors, m.Calls, stderr.String())
	}
	return m, nil
}

// replaceSection replaces the section that starts with heading, up to the
// next "## " heading, with section; it appends the section when there is
// none. The rest of the file is left as it is.
func replaceSection(path, heading, section string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc := string(raw)
	start := strings.Index(doc, heading+"\n")
	if start < 0 {
		if !strings.HasSuffix(doc, "\n") {
			doc += "\n"
		}
		return os.WriteFile(path, []byte(doc+"\n"+section), 0o644)
	}
	end := len(doc)
	if i := strings.Index(doc[start+len(heading):], "\n## "); i >= 0 {
		end = start + len(heading) + i + 1
		section += "\n"
	}
	return os.WriteFile(path, []byte(doc[:start]+section+doc[end:]), 0o644)
}
