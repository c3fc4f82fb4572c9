package redis

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// The middleware over the store, on every server: the commands each path
// sends, and one handler run among many simultaneous invocations.

type event struct {
	ID   string `json:"id"`
	Fail bool   `json:"fail,omitempty"`
}

var errDeclined = errors.New("declined")

// commands counts the commands a client sends, by name, through a go-redis
// hook. The hook sits outside the client's retries and a cluster client's
// redirections, so each count is one command the store sent; with no
// fault and a cluster layout the client already knows, one round trip.
type commands struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *commands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.add(cmd.Name())
		return next(ctx, cmd)
	}
}

func (c *commands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.add(cmd.Name())
		}
		return next(ctx, cmds)
	}
}

func (c *commands) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
}

// reset returns the counts and starts counting again.
func (c *commands) reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.n
	c.n = nil
	if got == nil {
		got = map[string]int{}
	}
	return got
}

// want fails the test unless the commands since the last reset are want,
// and starts counting again.
func (c *commands) want(t *testing.T, what string, want map[string]int) {
	t.Helper()
	if got := c.reset(); !maps.Equal(got, want) {
		t.Errorf("%s sent %v, want %v", what, got, want)
	}
}

// loadScripts loads the store's scripts on every primary, as a first call
// of each would through NOSCRIPT and EVAL.
func loadScripts(t *testing.T, c redis.UniversalClient) {
	t.Helper()
	load := func(ctx context.Context, c redis.Scripter) error {
		for _, s := range []*redis.Script{acquireScript, completeScript, releaseScript, reclaimScript, getScript} {
			if err := s.Load(ctx, c).Err(); err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	if cc, ok := c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(t.Context(), func(ctx context.Context, node *redis.Client) error { return load(ctx, node) })
	} else {
		err = load(t.Context(), c)
	}
	if err != nil {
		t.Fatalf("loading the scripts: %v", err)
	}
}

func echo(_ context.Context, e event) (string, error) {
	if e.Fail {
		return "", errDeclined
	}
	return "done " + e.ID, nil
}

// TestRoundTrips counts the commands of each path of an invocation: a new
// key 2, a duplicate 1, a replay from the local cache 0, a handler error
// 2; the store's first Acquire 2 more, its look at the server (HELLO, and
// EVAL of the check); and, on a server that does not hold the scripts
// yet, one EVAL more per script on its first use.
//
// Not in parallel: it flushes the server's scripts (see TestFaultsRetried).
func TestRoundTrips(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			sent := &commands{}
			c := srv.client(t, sent)
			s := newStore(t, c)
			ctx := t.Context()
			opts := []idempotency.Option{idempotency.WithEventKey("id"), idempotency.WithKeyPrefix("rt"), quiet}
			cached := idempotency.Wrap(s, echo, append(opts, idempotency.WithLocalCache(16))...)
			// Another instance of the function, whose cache is empty.
			other := idempotency.Wrap(s, echo, opts...)
			invoke := func(h *idempotency.Handler, e event) error {
				payload, _ := json.Marshal(e)
				_, err := h.Invoke(ctx, payload)
				return err
			}
			loadScripts(t, c)
			sent.reset()

			if err := invoke(cached, event{ID: "a"}); err != nil {
				t.Fatal(err)
			}
			sent.want(t, "the first invocation, a new key", map[string]int{"hello": 1, "eval": 1, "evalsha": 2})
			if err := invoke(cached, event{ID: "a2"}); err != nil {
				t.Fatal(err)
			}
			sent.want(t, "a new key", map[string]int{"evalsha": 2})
			if err := invoke(other, event{ID: "a"}); err != nil {
				t.Fatal(err)
			}
			sent.want(t, "a duplicate", map[string]int{"evalsha": 1})
			if err := invoke(cached, event{ID: "a"}); err != nil {
				t.Fatal(err)
			}
			sent.want(t, "a replay from the local cache", map[string]int{})
			if err := invoke(cached, event{ID: "b", Fail: true}); !errors.Is(err, errDeclined) {
				t.Fatalf("failing handler: %v, want its error", err)
			}
			sent.want(t, "a handler error", map[string]int{"evalsha": 2})

			if srv.cluster {
				return // flushing one node's scripts is enough to show the cost
			}
			if err := c.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			sent.want(t, "SCRIPT FLUSH", map[string]int{"script": 1})
			if err := invoke(cached, event{ID: "c"}); err != nil {
				t.Fatal(err)
			}
			sent.want(t, "a new key on a server without the scripts", map[string]int{"evalsha": 2, "eval": 2})
			if err := invoke(cached, event{ID: "d"}); err != nil {
				t.Fatal(err)
			}
			sent.want(t, "the next new key", map[string]int{"evalsha": 2})
		})
	}
}

// TestStorm: 100 simultaneous invocations with one key run the handler
// once. The one that runs it holds it until the 99 others have returned,
// each with an *InProgressError; then it completes, and a duplicate gets
// its response.
func TestStorm(t *testing.T) {
	t.Parallel()
	const invocations = 100
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			s := newStore(t, srv.client(t))
			var runs atomic.Int32
			release := make(chan struct{})
			h := idempotency.Wrap(s, func(ctx context.Context, e event) (string, error) {
				if runs.Add(1) > 1 {
					return "", errors.New("the handler ran twice")
				}
				select {
				case <-release:
				case <-time.After(5 * time.Minute):
					return "", errors.New("the other invocations did not return")
				}
				return "done " + e.ID, nil
			}, idempotency.WithEventKey("id"), idempotency.WithKeyPrefix("storm"),
				idempotency.WithLease(time.Hour), quiet)

			type result struct {
				out []byte
				err error
			}
			results := make(chan result, invocations)
			start := make(chan struct{})
			for range invocations {
				go func() {
					<-start
					out, err := h.Invoke(context.Background(), []byte(`{"id":"storm"}`))
					results <- result{out, err}
				}()
			}
			close(start)
			inProgress := 0
			for range invocations - 1 {
				r := <-results
				if _, ok := errors.AsType[*idempotency.InProgressError](r.err); !ok {
					t.Errorf("an invocation returned (%s, %v), want an *InProgressError", r.out, r.err)
					continue
				}
				inProgress++
			}
			close(release)
			if r := <-results; r.err != nil || string(r.out) != `"done storm"` {
				t.Errorf("the invocation that ran the handler returned (%s, %v)", r.out, r.err)
			}
			if out, err := h.Invoke(context.Background(), []byte(`{"id":"storm"}`)); err != nil || string(out) != `"done storm"` {
				t.Errorf("duplicate after: (%s, %v), want the stored response", out, err)
			}
			if n := runs.Load(); n != 1 {
				t.Errorf("handler ran %d times, want 1", n)
			}
			t.Logf("%d invocations got an *InProgressError", inProgress)
		})
	}
}
