// Command gobench is this library's side of the comparison with Powertools
// (see ../compare): a trivial handler wrapped by idempotency.Wrap, called
// in a loop in this process. It speaks the same small protocol as
// ../python/bench.py and ../node/bench.mjs:
//
//	gobench -store dynamodb|redis|memory|sdk|goredis|goredis-handler|bare -scenario new|dup|cache -n N [-endpoint URL -table T]
//
// Store redis is redis on the server of the redis:// URL -endpoint.
// Stores sdk, goredis and bare are not the library but the floors it is
// measured against: sdk makes the same DynamoDB requests with the
// AWS SDK for Go alone, and goredis the same Redis commands
// with go-redis alone, on the new and dup paths only; bare runs the handler
// alone, decoding the event and encoding the reply as aws-lambda-go does.
// goredis-handler is goredis and, on the new path, bare: what a Go
// function on go-redis pays with no idempotency library, since the
// library's new-key call runs the handler too (a duplicate runs none).
//
// It prepares (for dup and cache, N calls that leave N completed records),
// prints READY, waits for a line on stdin, makes the N measured calls, and
// prints one JSON line with the wall and CPU time they took, and what they
// allocated.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
	"github.com/gopowertools/lambda/redis"
	goredis "github.com/redis/go-redis/v9"
)

type event struct {
	ID       string `json:"id"`
	Amount   int    `json:"amount"`
	Currency string `json:"currency"`
}

type reply struct {
	OK bool   `json:"ok"`
	ID string `json:"id"`
}

// handler is the trivial handler all three implementations wrap.
func handler(_ context.Context, e event) (reply, error) {
	return reply{OK: true, ID: e.ID}, nil
}

func main() {
	storeName := flag.String("store", "memory", "dynamodb, redis, memory, sdk (the SDK's requests alone), goredis (go-redis's commands alone), goredis-handler (those and the handler) or bare (the handler alone)")
	scenario := flag.String("scenario", "new", "new, dup or cache")
	n := flag.Int("n", 1000, "measured calls")
	endpoint := flag.String("endpoint", "", "DynamoDB endpoint (stores dynamodb, sdk), or redis:// URL (stores redis, goredis)")
	table := flag.String("table", "", "DynamoDB table (store dynamodb)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the measured calls to this file")
	flag.Parse()
	profile = *cpuProfile
	if err := run(*storeName, *scenario, *n, *endpoint, *table); err != nil {
		fmt.Fprintln(os.Stderr, "gobench:", err)
		os.Exit(1)
	}
}

func run(storeName, scenario string, n int, endpoint, table string) error {
	newClient := func() *dynamodb.Client { return newDynamoDBClient(endpoint, nil) }
	newRedis := func() (*goredis.Client, error) {
		opt, err := goredis.ParseURL(endpoint)
		if err != nil {
			return nil, err
		}
		return goredis.NewClient(opt), nil
	}
	var store idempotency.Store
	switch storeName {
	case "memory":
		store = idempotencytest.NewStore()
	case "dynamodb":
		s, err := dynamo.New(newClient(), func(o *dynamo.Options) { o.TableName = table })
		if err != nil {
			return err
		}
		store = s
	case "redis":
		client, err := newRedis()
		if err != nil {
			return err
		}
		defer client.Close()
		s, err := redis.New(client)
		if err != nil {
			return err
		}
		store = s
	case "bare":
	case "sdk", "goredis", "goredis-handler":
		if scenario == "cache" {
			return fmt.Errorf("store %s has no cache scenario: it makes no requests", storeName)
		}
	default:
		return fmt.Errorf("unknown store %q", storeName)
	}
	run := fmt.Sprintf("go-%d-%d", os.Getpid(), time.Now().UnixNano())

	// The events are encoded before the clock starts, as the Lambda
	// runtime hands the handler bytes. Each keeps its key for the
	// floors, which have no key to find.
	events := make([]call, n)
	for i := range events {
		events[i] = newCall(fmt.Sprintf("%s-%d", run, i))
	}
	// invoke is one measured call; prepare is what the warm-up does.
	var invoke, prepare func(ctx context.Context, c call) error
	if storeName == "bare" {
		invoke = func(ctx context.Context, c call) error { return bareCall(ctx, c.payload) }
		prepare = invoke
	} else if storeName == "sdk" || strings.HasPrefix(storeName, "goredis") {
		var floorCall func(ctx context.Context, key string, complete bool) error
		if storeName == "sdk" {
			floorCall = sdkFloor{client: newClient(), table: table}.call
		} else {
			floor, err := newGoredisFloor(context.Background(), newRedis)
			if err != nil {
				return err
			}
			defer floor.client.Close()
			floorCall = floor.call
		}
		prepare = func(ctx context.Context, c call) error { return floorCall(ctx, c.key, true) }
		if storeName == "goredis-handler" {
			prepare = func(ctx context.Context, c call) error {
				if err := floorCall(ctx, c.key, true); err != nil {
					return err
				}
				return bareCall(ctx, c.payload)
			}
		}
		invoke = prepare
		if scenario == "dup" {
			invoke = func(ctx context.Context, c call) error { return floorCall(ctx, c.key, false) }
		}
	} else {
		var opts []idempotency.Option
		if scenario == "cache" {
			opts = append(opts, idempotency.WithLocalCache(n))
		}
		h := wrap(store, opts...)
		invoke = func(ctx context.Context, c call) error {
			_, err := h.Invoke(ctx, c.payload)
			return err
		}
		prepare = invoke
	}
	do := func(f func(context.Context, call) error, c call) error {
		// aws-lambda-go gives each invocation a context with its deadline.
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(30*time.Second))
		defer cancel()
		return f(ctx, c)
	}
	warm := events
	if scenario == "new" {
		warm = make([]call, min(n, 50))
		for i := range warm {
			warm[i] = newCall(fmt.Sprintf("%s-warm-%d", run, i))
		}
	}
	for _, c := range warm {
		if err := do(prepare, c); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	runtime.GC()

	fmt.Println("READY")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fmt.Errorf("waiting for GO: %w", err)
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var mem0, mem1 runtime.MemStats
	runtime.ReadMemStats(&mem0)
	cpu0, start := cpuTime(), time.Now()
	errors := 0
	for _, c := range events {
		if err := do(invoke, c); err != nil {
			if errors == 0 {
				fmt.Fprintln(os.Stderr, "gobench: first failed call:", err)
			}
			errors++
		}
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	runtime.ReadMemStats(&mem1)
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"calls": n, "seconds": wall.Seconds(), "cpu_seconds": cpu.Seconds(), "errors": errors,
		"version": version(storeName),
		// What the calls allocated, and the collections that cost: CPU
		// time that grows with allocation, beside the code's own.
		"alloc_bytes": mem1.TotalAlloc - mem0.TotalAlloc, "mallocs": mem1.Mallocs - mem0.Mallocs,
		"gcs": mem1.NumGC - mem0.NumGC,
	})
}

// wrap is the handler wrapped as every measurement of ours wraps it.
func wrap(store idempotency.Store, opts ...idempotency.Option) *idempotency.Handler {
	return idempotency.Wrap(store, handler, append([]idempotency.Option{
		idempotency.WithEventKey("id"), idempotency.WithKeyPrefix("bench")}, opts...)...)
}

// version is Go's version and, on Redis, go-redis's.
func version(storeName string) string {
	v := runtime.Version()
	if storeName != "redis" && storeName != "goredis" {
		return v
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/redis/go-redis/v9" {
				v += ", go-redis " + dep.Version
			}
		}
	}
	return v
}

// call is one event: the bytes the library gets, and the key the floors
// use.
type call struct {
	payload []byte
	key     string
}

func newCall(id string) call {
	payload, _ := json.Marshal(event{ID: id, Amount: 1250, Currency: "EUR"})
	return call{payload: payload, key: "bench#" + id}
}

// profile is the -cpuprofile file, "" for none.
var profile string

// newDynamoDBClient is the client of ours and of the floor alike, with the
// SDK's defaults but the endpoint and, when not nil, the HTTP client.
func newDynamoDBClient(endpoint string, httpClient aws.HTTPClient) *dynamodb.Client {
	return dynamodb.NewFromConfig(aws.Config{
		Region:      "us-east-1",
		Credentials: aws.CredentialsProviderFunc(staticCredentials),
		HTTPClient:  httpClient,
	}, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) })
}

func staticCredentials(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test", Source: "gobench"}, nil
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
