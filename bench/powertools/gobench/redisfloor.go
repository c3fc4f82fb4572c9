package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gopowertools/lambda/redis"
	goredis "github.com/redis/go-redis/v9"
)

// goredisFloor makes, for one call, the commands that redis makes on
// the same path, with go-redis and nothing else: no event decoding, no
// key search or hash, no record, no handler. Its CPU time per call is the
// least any Go library on go-redis can spend on that path, the floor that
// the Redis comparison measures ours against.
//
//   - new: EVALSHA of redis's Acquire script, which writes the
//     IN_PROGRESS hash (answer 0), then EVALSHA of its Complete script,
//     which replaces it with the COMPLETED hash (answer 1);
//   - dup: EVALSHA of the Acquire script, which finds the record and
//     answers it as HGETALL does.
//
// The commands carry the arguments redis sends (the times, the TTL,
// the hash's fields and values). They run redis's own scripts, not
// shorter ones: how long the server takes decides whether the reply is
// there when the client first reads, or whether the client waits for it
// in the netpoller, with more system calls and thread wake-ups, so the
// server's work shows in the client's CPU time. The scripts are
// unexported, so newGoredisFloor learns their SHA1 digests from one call
// through redis, before the measured calls.
type goredisFloor struct {
	client            *goredis.Client
	acquire, complete string // the scripts' SHA1 digests
}

// newGoredisFloor returns the floor on the client newClient makes, after
// one call through redis on another client of newClient's that
// records the digests of the scripts it runs. The caller closes f.client.
func newGoredisFloor(ctx context.Context, newClient func() (*goredis.Client, error)) (f goredisFloor, err error) {
	probe, err := newClient()
	if err != nil {
		return f, err
	}
	defer probe.Close()
	var digests []string
	probe.AddHook(evalshaHook(func(sha string) {
		if len(digests) == 0 || digests[len(digests)-1] != sha { // EVALSHA, NOSCRIPT, then EVALSHA again
			digests = append(digests, sha)
		}
	}))
	store, err := redis.New(probe)
	if err != nil {
		return f, err
	}
	h := wrap(store)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // a deadline, as Lambda gives
	defer cancel()
	if _, err := h.Invoke(ctx, newCall(fmt.Sprintf("floor-probe-%d", time.Now().UnixNano())).payload); err != nil {
		return f, err
	}
	if len(digests) != 2 {
		return f, fmt.Errorf("a new key through redis ran scripts %q, want two (acquire, complete)", digests)
	}
	f.acquire, f.complete = digests[0], digests[1]
	f.client, err = newClient()
	return f, err
}

// evalshaHook is a go-redis hook that calls seen with the digest of every
// EVALSHA command.
type evalshaHook func(sha string)

func (h evalshaHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h evalshaHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if args := cmd.Args(); cmd.Name() == "evalsha" && len(args) > 1 {
			h(fmt.Sprint(args[1]))
		}
		return next(ctx, cmd)
	}
}

func (h evalshaHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// call makes the commands for the key id. complete is false on the dup
// path, where the record exists and is returned.
func (f goredisFloor) call(ctx context.Context, id string, complete bool) error {
	now := time.Now()
	expiry := now.Add(time.Hour).Unix()
	ttl := (time.Hour + time.Minute).Milliseconds()
	// 32 hexadecimal digits, as long as redis's tokens.
	token := "0000000000000000" + strconv.FormatInt(now.UnixNano(), 16)
	deadline, _ := ctx.Deadline()
	key := []string{"idempotency:" + id}
	reply, err := f.client.EvalSha(ctx, f.acquire, key, now.Unix(), now.UnixMilli(), ttl,
		"status", "INPROGRESS", "expiration", expiry,
		"in_progress_expiration", deadline.UnixMilli(), "lease_token", token).Result()
	if err != nil {
		return err
	}
	if !complete {
		if hash, ok := reply.([]any); !ok || len(hash) == 0 {
			return fmt.Errorf("duplicate: want the stored hash, got %v", reply)
		}
		return nil
	}
	if n, ok := reply.(int64); !ok || n != 0 {
		return fmt.Errorf("new key: want 0 (written), got %v", reply)
	}
	n, err := f.client.EvalSha(ctx, f.complete, key, token, ttl,
		"status", "COMPLETED", "expiration", expiry, "lease_token", token,
		"data", []byte(`{"ok":true,"id":"`+id+`"}`), "completed_at", time.Now().UnixMilli()).Int64()
	if err == nil && n != 1 {
		err = fmt.Errorf("complete: want 1 (written), got %d", n)
	}
	return err
}
