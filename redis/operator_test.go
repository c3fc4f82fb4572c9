package redis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// operatorRecords are records in every state, as the middleware writes
// them, plus one as Powertools writes it (no token), and n more COMPLETED
// ones, to spread over pages and a cluster's nodes.
func operatorRecords(now time.Time, n int) []*idempotency.Record {
	hour := now.Add(time.Hour).Truncate(time.Second)
	ms := func(t time.Time) time.Time { return t.Truncate(time.Millisecond).UTC() }
	recs := []*idempotency.Record{
		{Key: "op#live", Status: idempotency.StatusInProgress, Expiry: hour, LeaseEnd: ms(now.Add(time.Minute)), Deadline: ms(now.Add(50 * time.Second)), LeaseToken: "t-live"},
		{Key: "op#stuck", Status: idempotency.StatusInProgress, Expiry: hour, LeaseEnd: ms(now.Add(-time.Minute)), LeaseToken: "t-stuck"},
		{Key: "op#done", Status: idempotency.StatusComplete, Expiry: hour, LeaseToken: "t-done", Response: []byte(`{"ok":true}`), PayloadHash: "h", CompletedAt: ms(now)},
		{Key: "op#omitted", Status: idempotency.StatusComplete, Expiry: hour, LeaseToken: "t-omitted", ResponseOmitted: true, ResponseOmittedReason: idempotency.ReasonTooLarge},
		{Key: "op#uncertain", Status: idempotency.StatusUncertain, Expiry: hour, LeaseToken: "t-uncertain"},
		{Key: "op#powertools", Status: idempotency.StatusComplete, Expiry: hour, Response: []byte(`"ok"`)},
	}
	for i := range n {
		recs = append(recs, &idempotency.Record{Key: fmt.Sprintf("op#n-%02d", i), Status: idempotency.StatusComplete, Expiry: hour, LeaseToken: fmt.Sprint("t-", i)})
	}
	return recs
}

// put writes rec's hash as the store writes it, without a condition.
func put(t *testing.T, c redis.UniversalClient, s *Store, rec *idempotency.Record) {
	t.Helper()
	key := s.opts.KeyPrefix + rec.Key
	if err := c.HSet(t.Context(), key, appendFields(nil, rec)...).Err(); err != nil {
		t.Fatal(err)
	}
	c.Expire(t.Context(), key, 2*time.Hour)
}

// scanAll ranges over s.Scan(status) to its end: the records by key (a
// key read twice is kept once, as SCAN may return it twice), the keys of
// the corrupted ones, the pages and the keys scanned.
func scanAll(t *testing.T, s *Store, status idempotency.Status) (recs map[string]*idempotency.Record, corrupted []string, pages, scanned int) {
	t.Helper()
	recs = map[string]*idempotency.Record{}
	for page, err := range s.Scan(t.Context(), status) {
		if err != nil {
			t.Fatal(err)
		}
		pages++
		scanned += page.Scanned
		for _, rec := range page.Records {
			recs[rec.Key] = rec
		}
		for _, err := range page.Corrupted {
			ce, ok := errors.AsType[*idempotency.CorruptedRecordError](err)
			if !ok {
				t.Fatalf("corrupted: %v, want a *CorruptedRecordError", err)
			}
			corrupted = append(corrupted, ce.Key)
		}
	}
	slices.Sort(corrupted)
	return recs, slices.Compact(corrupted), pages, scanned
}

// TestScanOnServers: Scan reads every record under the prefix, decoded as
// Get decodes it, across pages and a cluster's primaries; reports the
// keys that do not decode; filters on the status; and reads nothing
// outside the prefix, whose glob characters match themselves.
func TestScanOnServers(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			c := srv.client(t)
			ctx := t.Context()
			// The nodes that got a SCAN from cursor 0: on a cluster, each
			// primary (a cluster client's own SCAN goes to one node).
			var mu sync.Mutex
			started := map[string]bool{}
			if cc, ok := c.(*redis.ClusterClient); ok {
				cc.OnNewNode(func(node *redis.Client) {
					node.AddHook(&hook{process: func(cmd redis.Cmder) {
						if args := cmd.Args(); cmd.Name() == "scan" && args[1] == uint64(0) {
							mu.Lock()
							started[node.Options().Addr] = true
							mu.Unlock()
						}
					}})
				})
			}
			base := testPrefix(t)
			s := newStore(t, c, func(o *Options) { o.KeyPrefix, o.ScanCount = base+`x*[ab]?\:`, 2 })
			want := map[string]*idempotency.Record{}
			for _, rec := range operatorRecords(time.Now(), 30) {
				put(t, c, s, rec)
				want[rec.Key] = rec
			}
			c.HSet(ctx, s.opts.KeyPrefix+"op#bad", "status", "DONE")
			c.HSet(ctx, s.opts.KeyPrefix+"op#bad-uncertain", "status", "UNCERTAIN", "expiration", "soon")
			c.Set(ctx, s.opts.KeyPrefix+"op#string", `{"status":"COMPLETED"}`, time.Hour)
			// A record that the prefix, read as a pattern, would match.
			c.HSet(ctx, base+`xQa!:op#decoy`, "status", "COMPLETED")

			got, corrupted, pages, scanned := scanAll(t, s, "")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			if w := []string{"op#bad", "op#bad-uncertain", "op#string"}; !slices.Equal(corrupted, w) {
				t.Errorf("corrupted = %v, want %v", corrupted, w)
			}
			if scanned < len(want)+3 || pages < 2 {
				t.Errorf("%d keys scanned in %d pages, want at least %d in several", scanned, pages, len(want)+3)
			}
			if cc, ok := c.(*redis.ClusterClient); ok {
				if n := nodesOf(t, cc, slices.Collect(maps.Keys(want)), s.opts.KeyPrefix); n != 3 {
					t.Errorf("the records are on %d nodes, want all 3", n)
				}
				mu.Lock()
				if len(started) != 3 {
					t.Errorf("SCAN from cursor 0 went to %v, want each of the 3 primaries", slices.Sorted(maps.Keys(started)))
				}
				mu.Unlock()
			}

			got, corrupted, _, _ = scanAll(t, s, idempotency.StatusUncertain)
			if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, []string{"op#uncertain"}) || !slices.Equal(corrupted, []string{"op#bad-uncertain"}) {
				t.Errorf("UNCERTAIN scan: records %v, corrupted %v; want op#uncertain, and op#bad-uncertain", keys, corrupted)
			}
			got, _, _, _ = scanAll(t, s, idempotency.StatusInProgress)
			if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, []string{"op#live", "op#stuck"}) {
				t.Errorf("INPROGRESS scan: %v", keys)
			}

			for _, err := range s.Scan(ctx, "") {
				if err != nil {
					t.Fatal(err)
				}
				break // a caller that stops is not called again
			}

			// Released or expired between the SCAN that returned them and
			// their HGETALL: skipped, not corrupted.
			all := slices.Collect(maps.Keys(want))
			all = append(all, "op#bad", "op#bad-uncertain", "op#string")
			deleting := srv.client(t, beforePipeline(func() {
				for _, key := range all {
					c.Del(ctx, s.opts.KeyPrefix+key)
				}
			}))
			late, err := New(deleting, func(o *Options) { *o = s.opts })
			if err != nil {
				t.Fatal(err)
			}
			got, corrupted, pages, _ = scanAll(t, late, "")
			if len(got) != 0 || len(corrupted) != 0 || pages == 0 {
				t.Errorf("keys deleted after their SCAN: %d records, corrupted %v, in %d pages; want none, in a page", len(got), corrupted, pages)
			}

			empty := newStore(t, c)
			if _, _, pages, _ := scanAll(t, empty, ""); pages != 0 {
				t.Errorf("a prefix without keys: %d pages", pages)
			}
		})
	}
}

// beforePipeline is a hook that runs fn once, before the client's first
// pipeline of HGETALLs (a new connection's HELLO is a pipeline too).
func beforePipeline(fn func()) redis.Hook {
	fn = sync.OnceFunc(fn)
	return &hook{pipeline: func(cmds []redis.Cmder) {
		if len(cmds) > 0 && cmds[0].Name() == "hgetall" {
			fn()
		}
	}}
}

// hook calls process before each command, pipeline before each pipeline.
type hook struct {
	process  func(redis.Cmder)
	pipeline func([]redis.Cmder)
}

func (h *hook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.process != nil {
			h.process(cmd)
		}
		return next(ctx, cmd)
	}
}

func (h *hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.pipeline != nil {
			h.pipeline(cmds)
		}
		return next(ctx, cmds)
	}
}

// nodesOf returns on how many cluster nodes keys are, by CLUSTER KEYSLOT
// and CLUSTER SHARDS (each shard of the test cluster is one node),
// independently of Scan.
func nodesOf(t *testing.T, c *redis.ClusterClient, keys []string, prefix string) int {
	t.Helper()
	ctx := t.Context()
	shards, err := c.ClusterShards(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[int]bool{}
	for _, key := range keys {
		slot := c.ClusterKeySlot(ctx, prefix+key).Val()
		for i, shard := range shards {
			for _, r := range shard.Slots {
				if r.Start <= slot && slot <= r.End {
					nodes[i] = true
				}
			}
		}
	}
	return len(nodes)
}

func TestGlobEscape(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                   "",
		"idempotency:":       "idempotency:",
		`a*b?c[d]e\f`:        `a\*b\?c\[d\]e\\f`,
		"{tag}:^-":           "{tag}:^-",
		"\xff*not utf-8\xfe": "\xff\\*not utf-8\xfe",
	} {
		if got := globEscape(in); got != want {
			t.Errorf("globEscape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDeleteOnServers: Delete deletes a record only while it has the
// status and the lease token it was seen with.
func TestDeleteOnServers(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			c := srv.client(t)
			s := newStore(t, c)
			ctx := t.Context()
			now := time.Now()
			gone := func(key string) bool {
				_, err := s.Get(ctx, key)
				return errors.Is(err, idempotency.ErrRecordNotFound)
			}

			rec := &idempotency.Record{Key: "k", Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute), LeaseToken: "t"}
			if _, err := s.Acquire(ctx, rec, now); err != nil {
				t.Fatal(err)
			}
			for name, seen := range map[string]idempotency.Record{
				"another token":  {Key: "k", Status: idempotency.StatusInProgress, LeaseToken: "other"},
				"no token":       {Key: "k", Status: idempotency.StatusInProgress},
				"another status": {Key: "k", Status: idempotency.StatusComplete, LeaseToken: "t"},
			} {
				if err := s.Delete(ctx, &seen); !errors.Is(err, idempotency.ErrLeaseLost) || gone("k") {
					t.Errorf("%s: Delete = %v; want ErrLeaseLost, the record kept", name, err)
				}
			}

			// The invocation completed after the operator saw it
			// INPROGRESS: its response is kept.
			done := *rec
			done.Status, done.LeaseEnd, done.Response = idempotency.StatusComplete, time.Time{}, []byte(`1`)
			if err := s.Complete(ctx, &done); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, rec); !errors.Is(err, idempotency.ErrLeaseLost) || gone("k") {
				t.Errorf("Delete of the INPROGRESS record seen, now COMPLETED: %v; want ErrLeaseLost, the record kept", err)
			}
			if err := s.Delete(ctx, &done); err != nil || !gone("k") {
				t.Errorf("Delete of the record as it is: %v; want it deleted", err)
			}
			if err := s.Delete(ctx, &done); !errors.Is(err, idempotency.ErrLeaseLost) {
				t.Errorf("Delete of a missing record: %v, want ErrLeaseLost", err)
			}

			// As Powertools writes it: no token.
			pt := &idempotency.Record{Key: "pt", Status: idempotency.StatusComplete, Expiry: now.Add(time.Hour), Response: []byte(`"ok"`)}
			put(t, c, s, pt)
			if err := s.Delete(ctx, &idempotency.Record{Key: "pt", Status: idempotency.StatusComplete, LeaseToken: "t"}); !errors.Is(err, idempotency.ErrLeaseLost) || gone("pt") {
				t.Errorf("Delete with a token of a record without one: %v", err)
			}
			if err := s.Delete(ctx, pt); err != nil || !gone("pt") {
				t.Errorf("Delete of a record without a token: %v", err)
			}

			c.Set(ctx, s.opts.KeyPrefix+"string", "x", time.Hour)
			if err := s.Delete(ctx, &idempotency.Record{Key: "string", Status: idempotency.StatusComplete}); !isCorrupted(err) {
				t.Errorf("Delete of a key that is not a hash: %v, want a *CorruptedRecordError", err)
			}
			if err := s.Delete(ctx, &idempotency.Record{Status: idempotency.StatusComplete}); err == nil {
				t.Error("Delete of an empty key: no error")
			}
		})
	}
}

// aclOperatorRules are what the operator's tool needs besides aclRules
// (and aclClusterRules on a cluster): list's SCAN. docs/redis.md gives
// them as an access string.
var aclOperatorRules = []string{"+scan"}

// TestACLOperator: a user with aclRules and aclOperatorRules, on its key
// prefix, can scan, read, delete and reclaim the records.
func TestACLOperator(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			admin := srv.client(t)
			ctx := t.Context()
			prefix := testPrefix(t)
			rules := append(append([]string{"~" + prefix + "*"}, aclRules...), aclOperatorRules...)
			c := srv.userClient(t, newACLUser(t, srv, "on", rules...), "s3cret")
			s, err := New(c, func(o *Options) { o.KeyPrefix, o.ScanCount = prefix, 2 })
			if err != nil {
				t.Fatal(err)
			}
			recs := operatorRecords(time.Now(), 10)
			for _, rec := range recs {
				put(t, admin, s, rec)
			}
			got, corrupted, _, _ := scanAll(t, s, "")
			if len(got) != len(recs) || len(corrupted) != 0 {
				t.Fatalf("scan as the operator: %d records, corrupted %v; want %d", len(got), corrupted, len(recs))
			}
			stuck := got["op#stuck"]
			if err := s.Delete(ctx, stuck); err != nil {
				t.Errorf("Delete as the operator: %v", err)
			}
			uncertain := got["op#uncertain"]
			done := &idempotency.Record{Key: uncertain.Key, Status: idempotency.StatusComplete, Expiry: uncertain.Expiry, LeaseToken: "resolved", Response: []byte(`1`)}
			if err := s.Reclaim(ctx, done, uncertain.LeaseToken); err != nil {
				t.Errorf("Reclaim as the operator: %v", err)
			}
			if rec, err := s.Get(ctx, done.Key); err != nil || rec.Status != idempotency.StatusComplete {
				t.Errorf("Get as the operator: %+v, %v", rec, err)
			}
		})
	}
}
