package redis

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testing/golden"
	"github.com/redis/go-redis/v9"
)

// The golden records of this package: the hash of each status, as the
// store writes it, in testdata/golden, each written by one invocation at
// the golden clock (internal/testing/golden) and read back by a duplicate.

// goldenHash is a golden file: a record's key, the field/value pairs of
// its HSET in the order they are sent, and the PEXPIRE that follows, in
// milliseconds (absent: none). The TTL of a record written after
// Acquire is counted on the real clock (Complete has no other), from
// which the golden clock is long past: only the minute after expiry is
// left.
type goldenHash struct {
	Key     string      `json:"key"`
	HSET    [][2]string `json:"hset"`
	PEXPIRE int64       `json:"pexpire,omitempty"`
}

// writes records the records of the scripts that write one (acquire and
// complete), as a go-redis hook, from their arguments: prefix is left out
// of the key.
type writes struct {
	prefix string
	mu     sync.Mutex
	hashes []goldenHash
}

func (w *writes) DialHook(next redis.DialHook) redis.DialHook { return next }

func (w *writes) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (w *writes) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err == nil {
			w.add(cmd.Args())
		}
		return err
	}
}

// lead is how many arguments come before a script's TTL, as each
// script's comment lists them.
var lead = map[string]int{acquireScript.Hash(): 2, completeScript.Hash(): 1}

// add records the record of the command args: EVALSHA or EVAL, the
// script, the key count, the key, then the script's arguments.
func (w *writes) add(args []any) {
	if len(args) < 4 {
		return
	}
	name, _ := args[0].(string)
	script := fmt.Sprint(args[1])
	switch strings.ToLower(name) {
	case "evalsha":
	case "eval":
		sum := sha1.Sum([]byte(script))
		script = hex.EncodeToString(sum[:])
	default:
		return
	}
	n, ok := lead[script]
	if !ok {
		return
	}
	argv := args[4:]
	h := goldenHash{Key: strings.TrimPrefix(fmt.Sprint(args[3]), w.prefix)}
	h.PEXPIRE, _ = strconv.ParseInt(text(argv[n]), 10, 64)
	for i := n + 1; i+1 < len(argv); i += 2 {
		h.HSET = append(h.HSET, [2]string{text(argv[i]), text(argv[i+1])})
	}
	w.mu.Lock()
	w.hashes = append(w.hashes, h)
	w.mu.Unlock()
}

// text is an argument as the server gets it.
func text(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}

const goldenFunction = "golden"

// TestGoldenWrite: for the same event, clock and lease token, this
// version sends the hashes of testdata/golden, byte for byte (-update
// rewrites them).
func TestGoldenWrite(t *testing.T) {
	srv := servers[0] // the commands do not depend on the server
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", goldenFunction)
	for _, c := range golden.Cases {
		t.Run(c.Name, func(t *testing.T) {
			w := &writes{prefix: testPrefix(t)}
			store := newStore(t, srv.client(t, w), func(o *Options) { o.KeyPrefix = w.prefix + DefaultKeyPrefix })
			golden.Seed(t)
			if _, _, err := golden.Invoke(store, c.Event(), c.Fn, c.Opts...); err != nil && c.Name != "uncertain" {
				t.Fatal(err)
			}
			if len(w.hashes) != len(c.Writes) {
				t.Fatalf("the invocation wrote %d records, want %d: %+v", len(w.hashes), len(c.Writes), w.hashes)
			}
			for i, name := range c.Writes {
				if name != "" {
					golden.Check(t, name, golden.Marshal(t, w.hashes[i]))
				}
			}
		})
	}
}

// TestGoldenRead: each hash of testdata/golden, written to the server as
// the file holds it, gives a duplicate the outcome its case names, on
// every server.
func TestGoldenRead(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", goldenFunction)
	golden.CheckRead(t, golden.Files(golden.Cases))
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			client := srv.client(t)
			prefix := testPrefix(t)
			store := newStore(t, client, func(o *Options) { o.KeyPrefix = prefix + DefaultKeyPrefix })
			for _, c := range golden.Cases {
				for _, file := range c.Writes {
					if file == "" {
						continue
					}
					var h goldenHash
					if err := json.Unmarshal(golden.Read(t, file), &h); err != nil {
						t.Fatalf("%s: %v", file, err)
					}
					load(t, client, prefix+h.Key, h)
					for _, d := range c.Dups[file] {
						if got := golden.Duplicate(store, d.Event, c.Opts...); got != d.Want {
							t.Errorf("%s: a duplicate of %s got\n\t%s\nwant\n\t%s", file, d.Event, got, d.Want)
						}
					}
				}
			}
		})
	}
}

// load writes the hash h at key, as the scripts do: DEL, HSET, PEXPIRE.
func load(t *testing.T, client redis.UniversalClient, key string, h goldenHash) {
	t.Helper()
	ctx := t.Context()
	var fields []any
	for _, f := range h.HSET {
		fields = append(fields, f[0], f[1])
	}
	if err := client.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.HSet(ctx, key, fields...).Err(); err != nil {
		t.Fatal(err)
	}
	if h.PEXPIRE > 0 {
		if err := client.PExpire(ctx, key, time.Duration(h.PEXPIRE)*time.Millisecond).Err(); err != nil {
			t.Fatal(err)
		}
	}
}
