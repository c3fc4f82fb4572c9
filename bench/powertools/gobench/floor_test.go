package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/redis"
	goredis "github.com/redis/go-redis/v9"
)

// BenchmarkDynamoDB is the comparison of ours with the AWS SDK for Go
// alone (the sdk floor) without the network: both clients, made by
// newDynamoDBClient, send their requests to cannedDynamoDB, which answers
// on the calling goroutine as DynamoDB would. What is left is the work of
// the program itself, the SDK's and ours, without net/http's connection
// goroutines, the kernel, or the server's pace, which make most of a
// call's CPU on moto (bench-compare) and most of its noise. The difference
// between impl=ours and impl=floor on a path is what the library adds.
// cpu-ns/op is the process's CPU time per call, as bench-compare measures
// it, garbage collection included; on a shared machine it moves less than
// ns/op, which is wall time:
//
//	go test -run '^$' -bench DynamoDB -benchmem -count 6 ./powertools/gobench | benchstat -col /impl -
func BenchmarkDynamoDB(b *testing.B) {
	for _, path := range []string{"new", "dup"} {
		for _, impl := range []string{"ours", "floor"} {
			b.Run("path="+path+"/impl="+impl, func(b *testing.B) {
				server := &cannedDynamoDB{dup: path == "dup"}
				client := newDynamoDBClient("http://dynamodb.test", server)
				var invoke func(ctx context.Context, c call) error
				if impl == "floor" {
					floor := sdkFloor{client: client, table: "bench"}
					invoke = func(ctx context.Context, c call) error { return floor.call(ctx, c.key, path == "new") }
				} else {
					store, err := dynamo.New(client, func(o *dynamo.Options) { o.TableName = "bench" })
					if err != nil {
						b.Fatal(err)
					}
					h := wrap(store)
					invoke = func(ctx context.Context, c call) error {
						_, err := h.Invoke(ctx, c.payload)
						return err
					}
				}
				do := func(c call) {
					ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(30*time.Second))
					defer cancel()
					if err := invoke(ctx, c); err != nil {
						b.Fatal(err)
					}
				}
				do(newCall("warm-up")) // ours: the DescribeTable of the first Acquire
				server.requests = 0
				events := make([]call, b.N)
				for i := range events {
					events[i] = newCall(fmt.Sprintf("%s-%d", b.Name(), i))
				}
				b.ResetTimer()
				cpu0 := cpuTime()
				for _, c := range events {
					do(c)
				}
				b.StopTimer()
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(server.requests)/float64(b.N), "requests/op")
			})
		}
	}
}

// cannedDynamoDB is an aws.HTTPClient that answers DynamoDB's JSON
// protocol for DescribeTable (a table of one Region) and PutItem: with
// success, or, when dup is set, with the failed condition of a duplicate,
// which returns the item as a COMPLETED record with a response (ALL_OLD).
// Like DynamoDB, it sends the CRC32 of each body, which the SDK checks.
type cannedDynamoDB struct {
	dup      bool
	requests int
}

func (c *cannedDynamoDB) Do(req *http.Request) (*http.Response, error) {
	c.requests++
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	status, reply := http.StatusOK, []byte(`{}`)
	switch op := strings.TrimPrefix(req.Header.Get("X-Amz-Target"), "DynamoDB_20120810."); op {
	case "DescribeTable":
		reply = []byte(`{"Table":{"TableName":"bench","TableStatus":"ACTIVE"}}`)
	case "PutItem":
		if c.dup {
			status, reply, err = duplicate(body)
			if err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("cannedDynamoDB: unexpected operation %q", op)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("Content-Length", strconv.Itoa(len(reply)))
	h.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(reply)), 10))
	h.Set("X-Amzn-Requestid", "canned")
	return &http.Response{
		StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(reply)), ContentLength: int64(len(reply)), Request: req,
	}, nil
}

// duplicate is the failed condition of a PutItem whose item is already
// stored, COMPLETED, with the response of the bench's handler.
func duplicate(body []byte) (int, []byte, error) {
	var in struct {
		Item map[string]map[string]string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return 0, nil, err
	}
	item := in.Item
	item["status"] = map[string]string{"S": "COMPLETED"}
	delete(item, "in_progress_expiration")
	item["data"] = map[string]string{"S": `{"ok":true,"id":"` + item["id"]["S"] + `"}`}
	reply, err := json.Marshal(map[string]any{
		"__type":  "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
		"message": "The conditional request failed",
		"Item":    item,
	})
	return http.StatusBadRequest, reply, err
}

// BenchmarkRedis compares ours with go-redis and the handler
// (the goredis floor, bareCall) on the Valkey or Redis server of
// TEST_VALKEY_ADDR (scripts/with-servers.sh), in its database 15: the
// same comparison as bench-compare's, in one process, where -benchmem and
// -memprofile tell what each allocates:
//
//	scripts/with-servers.sh bash -c 'cd bench && go test -run "^$" -bench Redis -benchmem -count 6 ./powertools/gobench'
func BenchmarkRedis(b *testing.B) {
	addr := os.Getenv("TEST_VALKEY_ADDR")
	if addr == "" {
		b.Skip("TEST_VALKEY_ADDR is not set: run under scripts/with-servers.sh")
	}
	newRedis := func() (*goredis.Client, error) { return goredis.NewClient(&goredis.Options{Addr: addr, DB: 15}), nil }
	for _, path := range []string{"new", "dup"} {
		for _, impl := range []string{"ours", "floor"} {
			b.Run("path="+path+"/impl="+impl, func(b *testing.B) {
				var invoke, prepare func(ctx context.Context, c call) error
				if impl == "floor" {
					floor, err := newGoredisFloor(b.Context(), newRedis)
					if err != nil {
						b.Fatal(err)
					}
					defer floor.client.Close()
					prepare = func(ctx context.Context, c call) error {
						if err := floor.call(ctx, c.key, true); err != nil {
							return err
						}
						return bareCall(ctx, c.payload)
					}
					invoke = prepare
					if path == "dup" {
						invoke = func(ctx context.Context, c call) error { return floor.call(ctx, c.key, false) }
					}
				} else {
					client, _ := newRedis()
					defer client.Close()
					store, err := redis.New(client)
					if err != nil {
						b.Fatal(err)
					}
					h := wrap(store)
					invoke = func(ctx context.Context, c call) error {
						_, err := h.Invoke(ctx, c.payload)
						return err
					}
					prepare = invoke
				}
				do := func(f func(context.Context, call) error, c call) {
					ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(30*time.Second))
					defer cancel()
					if err := f(ctx, c); err != nil {
						b.Fatal(err)
					}
				}
				run := fmt.Sprintf("%s-%d", b.Name(), time.Now().UnixNano())
				events := make([]call, b.N)
				for i := range events {
					events[i] = newCall(fmt.Sprintf("%s-%d", run, i))
					if path == "dup" {
						do(prepare, events[i])
					}
				}
				do(prepare, newCall(run+"-warm-up"))
				b.ResetTimer()
				cpu0 := cpuTime()
				for _, c := range events {
					do(invoke, c)
				}
				b.StopTimer()
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
