package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/internal/keyformat"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// The two sides of the differential test: the function, a program of its
// own, and the stores its records are written to, for it and the command.

// answer is the function's answer to one delivery (difffn's Answer).
type answer struct {
	Ran       bool   `json:"ran"`
	Outcome   string `json:"outcome"`
	ErrorType string `json:"error_type"`
	Error     string `json:"error"`
	LeaseEnd  string `json:"lease_end"`
	Response  []byte `json:"response"`
}

func (a answer) String() string {
	return fmt.Sprintf("ran %v, outcome %q, error %s, lease end %q, response %s", a.Ran, a.Outcome, orNone(a.ErrorType), a.LeaseEnd, a.Response)
}

// function is a running difffn.
type function struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

var difffn struct {
	once sync.Once
	path string
	err  error
}

// functionBinary builds difffn once per test binary.
func functionBinary(t *testing.T) string {
	t.Helper()
	difffn.once.Do(func() {
		dir, err := os.MkdirTemp("", "difffn-")
		if err != nil {
			difffn.err = err
			return
		}
		difffn.path = filepath.Join(dir, "difffn")
		out, err := exec.Command("go", "build", "-o", difffn.path, "./testdata/difffn").CombinedOutput()
		if err != nil {
			difffn.err = fmt.Errorf("go build ./testdata/difffn: %v\n%s", err, out)
		}
	})
	if difffn.err != nil {
		t.Fatal(difffn.err)
	}
	return difffn.path
}

// startFunction starts difffn with env, and stops it after the test.
func startFunction(t *testing.T, env map[string]string) *function {
	t.Helper()
	cmd := exec.Command(functionBinary(t))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("difffn: %v\n%s", err, stderr.String())
		}
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &function{cmd: cmd, in: in, out: sc}
}

// deliver sends event to f, with seed as its in-memory store's record.
func (f *function) deliver(t *testing.T, event string, seed *idempotency.Record) answer {
	t.Helper()
	line, err := json.Marshal(map[string]any{"event": event, "seed": seed, "timeout_ms": 2000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.in.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	if !f.out.Scan() {
		t.Fatalf("difffn answered nothing: %v", f.out.Err())
	}
	var a answer
	if err := json.Unmarshal(f.out.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// diffStore is a store of the test: where the records of a setting are
// written, for the command and the function both.
type diffStore struct {
	name string
	// seedsInline: the function's store is its own, seeded with each
	// delivery (the in-memory store); otherwise it reads the table.
	seedsInline bool
	// put writes rec (TypeScript's way, with ts) or, corrupted, an item
	// that does not decode.
	put func(t *testing.T, rec *idempotency.Record, corrupted, ts bool)
	// harness runs the command on the store; env is the function's,
	// given to the function process besides its own.
	harness func(t *testing.T) *harness
	where   []string
	env     map[string]string
}

// memoryStore is the command's store over the in-memory store of a test:
// the records the function's in-memory stores are seeded with.
type memoryStore struct{ *idempotencytest.Store }

func (memoryStore) Delete(context.Context, *idempotency.Record) error {
	return errors.New("the in-memory store of the test deletes nothing")
}

func (memoryStore) DeleteCorrupted(context.Context, string) error {
	return errors.New("the in-memory store of the test deletes nothing")
}

func (m memoryStore) scan(ctx context.Context, status idempotency.Status) iter.Seq2[*page, error] {
	return func(yield func(*page, error) bool) {
		p := &page{}
		for _, rec := range m.Records() {
			p.Scanned++
			got, err := m.Get(ctx, rec.Key)
			switch {
			case err != nil:
				p.Corrupted = append(p.Corrupted, err)
			case status == "" || got.Status == status:
				p.Records = append(p.Records, got)
			}
		}
		yield(p, nil)
	}
}

func (memoryStore) scanned() (string, string) { return "record", "records" }

func (memoryStore) close() {}

func newMemoryDiffStore() *diffStore {
	mem := idempotencytest.NewStore()
	return &diffStore{
		name: "memory", seedsInline: true,
		put: func(_ *testing.T, rec *idempotency.Record, _, _ bool) { mem.Put(rec) },
		harness: func(*testing.T) *harness {
			return &harness{store: func(*storeFlags) (recordStore, error) { return memoryStore{mem}, nil }}
		},
		where: []string{"--table", "in-memory"},
		env:   map[string]string{"DIFFFN_STORE": "memory"},
	}
}

func newMotoDiffStore(t *testing.T) *diffStore {
	endpoint := testenv.Endpoint(t, testenv.MotoEnv)
	table, client := newTable(t, endpoint)
	store, err := dynamo.New(client, func(o *dynamo.Options) { o.TableName = table })
	if err != nil {
		t.Fatal(err)
	}
	return &diffStore{
		name: "moto",
		put: func(t *testing.T, rec *idempotency.Record, corrupted, ts bool) {
			if corrupted {
				_, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: &table, Item: map[string]types.AttributeValue{
					"id": &types.AttributeValueMemberS{Value: rec.Key}, "status": &types.AttributeValueMemberS{Value: string(rec.Status)},
					"lease_token": &types.AttributeValueMemberS{Value: rec.LeaseToken},
				}})
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			// Written as a function writes it: acquired in progress, then
			// completed (or marked uncertain), in its format.
			ctx := t.Context()
			if ts {
				ctx = keyformat.WithMode(ctx, keyformat.TypeScript)
			}
			first := *rec
			if rec.Status != idempotency.StatusInProgress {
				first = idempotency.Record{Key: rec.Key, Status: idempotency.StatusInProgress, Expiry: rec.Expiry, LeaseEnd: rec.Expiry, LeaseToken: rec.LeaseToken, PayloadHash: rec.PayloadHash}
			}
			// A retried request (moto, one request at a time, can be slow)
			// finds its own record: written.
			if existing, err := store.Acquire(ctx, &first, time.Now().Add(-2*time.Hour)); err != nil || (existing != nil && existing.LeaseToken != first.LeaseToken) {
				t.Fatalf("seed %s: %v, %v", rec.Key, existing, err)
			}
			mark := store.Complete
			if rec.Status == idempotency.StatusUncertain {
				mark = store.MarkUncertain
			}
			if rec.Status != idempotency.StatusInProgress {
				if err := mark(ctx, rec); err != nil {
					t.Fatalf("seed %s: %v", rec.Key, err)
				}
			}
		},
		harness: func(*testing.T) *harness { return &harness{endpoint: endpoint} },
		where:   []string{"--table", table},
		env: map[string]string{
			"DIFFFN_STORE": "dynamodb", "POWERTOOLS_IDEMPOTENCY_TABLE": table,
			"AWS_ENDPOINT_URL_DYNAMODB": endpoint, "AWS_REGION": "us-east-1",
			"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
			"AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_EC2_METADATA_DISABLED": "true",
		},
	}
}
