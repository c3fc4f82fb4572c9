package redis

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// This file holds the commands of an operator's tool (cmd/idempotency),
// which the middleware never sends: reading every record, and deleting a
// record that a person has looked at. They are here, not in the tool,
// because they read and write the hash as the Store does (key prefix,
// field names, decoding), as the dynamo package's Scan and Delete do for
// its table.

// Page is what one step of [Store.Scan] read: one SCAN, and the records
// of the keys it returned.
type Page struct {
	// Records are the records of the page that decode, in SCAN's order.
	Records []*idempotency.Record
	// Corrupted has an [*idempotency.CorruptedRecordError] for each key
	// of the page that does not decode: a hash that cannot be read, or a
	// key that holds another type than a hash.
	Corrupted []error
	// Scanned is how many keys the SCAN returned, before the status
	// filter: the progress of the scan.
	Scanned int
}

// Scan reads the records of the store, the keys that start with
// [Options.KeyPrefix], one page at a time, in no particular order, and
// only those whose status field is status when it is not empty. A page is
// one SCAN (MATCH the prefix, COUNT [Options.ScanCount]) and one pipeline
// of an HGETALL per key it returned; a SCAN that returned no key makes no
// page. On a *redis.ClusterClient it scans each primary in turn (found with
// ForEachMaster), on a *redis.Ring each shard, and on any other client the
// one server it reaches.
//
// The scan has SCAN's guarantees: a record that exists for the whole scan
// is read, but may be read twice (when the server resizes its key table
// meanwhile); one written or deleted during the scan may or may not be.
// The HGETALLs go where the client sends reads, replicas included: act on
// a record only after a [Store.Get]. With an empty KeyPrefix, every key of
// the server is read as a record, and those that are not are reported
// corrupted.
//
// The scan stops at the first error, or when the caller stops ranging.
func (s *Store) Scan(ctx context.Context, status idempotency.Status) iter.Seq2[*Page, error] {
	return func(yield func(*Page, error) bool) {
		if err := s.kind.Do(ctx, s.checkKind); err != nil {
			yield(nil, err)
			return
		}
		nodes, err := s.nodes(ctx)
		if err != nil {
			yield(nil, fmt.Errorf("redis: scan: listing the nodes: %w", err))
			return
		}
		match := globEscape(s.opts.KeyPrefix) + "*"
		for _, node := range nodes {
			var cursor uint64
			for {
				keys, next, err := node.Scan(ctx, cursor, match, int64(s.opts.ScanCount)).Result()
				if err != nil {
					yield(nil, fmt.Errorf("redis: scan %q: %w", match, err))
					return
				}
				if len(keys) > 0 {
					page, err := s.read(ctx, keys, status)
					if !yield(page, err) || err != nil {
						return
					}
				}
				if next == 0 {
					break
				}
				cursor = next
			}
		}
	}
}

// scanner is where a SCAN goes: a client, or one node's client.
type scanner interface {
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
}

// nodes returns where SCAN must go to see every key: each primary of a
// cluster, or each shard of a ring, in the order of their addresses; else
// the store's client.
func (s *Store) nodes(ctx context.Context) ([]scanner, error) {
	var each func(context.Context, func(context.Context, *redis.Client) error) error
	switch c := s.client.(type) {
	case *redis.ClusterClient:
		each = c.ForEachMaster
	case *redis.Ring:
		each = c.ForEachShard
	default:
		return []scanner{s.client}, nil
	}
	// each calls fn on every node at once; the pages must come one at a
	// time, so fn only collects the nodes.
	var mu sync.Mutex
	var clients []*redis.Client
	err := each(ctx, func(_ context.Context, c *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		clients = append(clients, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(clients, func(a, b *redis.Client) int { return strings.Compare(a.Options().Addr, b.Options().Addr) })
	nodes := make([]scanner, len(clients))
	for i, c := range clients {
		nodes[i] = c
	}
	return nodes, nil
}

// read returns the page of the Redis keys that one SCAN returned, read
// with one pipeline of HGETALLs, which the client sends to each key's
// node.
func (s *Store) read(ctx context.Context, keys []string, status idempotency.Status) (*Page, error) {
	cmds := make([]*redis.MapStringStringCmd, len(keys))
	// Pipelined's error is that of the first command that failed; each
	// command's own is looked at below.
	s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HGetAll(ctx, k)
		}
		return nil
	})
	page := &Page{Scanned: len(keys)}
	for i, cmd := range cmds {
		key := strings.TrimPrefix(keys[i], s.opts.KeyPrefix)
		hash, err := cmd.Result()
		switch {
		case redis.HasErrorPrefix(err, "WRONGTYPE"):
			// Not a hash, so no status: what DynamoDB's filter does with
			// an item without one.
			if status == "" {
				page.Corrupted = append(page.Corrupted, requestError("scan", key, err))
			}
			continue
		case err != nil:
			return nil, requestError("scan", key, err)
		case len(hash) == 0:
			continue // deleted since the SCAN: released, or expired
		case status != "" && hash[fieldStatus] != string(status):
			continue
		}
		f := fieldsOfMap(hash)
		rec, err := decode(key, &f)
		if err != nil {
			page.Corrupted = append(page.Corrupted, err)
			continue
		}
		page.Records = append(page.Records, rec)
	}
	return page, nil
}

// globEscape escapes the bytes that SCAN's MATCH reads as a pattern
// (* ? [ ] \), so that the pattern matches s itself. Bytes, not runes: a
// Redis key need not be UTF-8.
func globEscape(s string) string {
	var b strings.Builder
	for i := range len(s) {
		if strings.IndexByte(`*?[]\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Delete deletes the record rec.Key if it is still the record rec shows:
// one script that deletes the key when its status field is rec.Status and
// its lease_token field is rec.LeaseToken (absent, for a record without a
// token). The lease token is unique to the invocation that wrote the
// record, and the status tells its INPROGRESS record from the COMPLETED or
// UNCERTAIN one it wrote later with the same token: an operator who
// decided to delete an INPROGRESS record does not delete the response its
// invocation stored meanwhile.
//
// Unlike [Store.Release], a record that is missing, or has changed, is not
// deleted and gives [idempotency.ErrLeaseLost]; [Store.Get] tells which. A
// key that holds another type than a hash gives a
// [*idempotency.CorruptedRecordError].
func (s *Store) Delete(ctx context.Context, rec *idempotency.Record) error {
	if rec.Key == "" {
		return errEmptyKey
	}
	return s.conditional(ctx, "delete", rec.Key, deleteScript, []any{string(rec.Status), rec.LeaseToken})
}

// DeleteCorrupted deletes the Redis key of the record key when it is not
// a record the store can read (one that [Store.Get] answers with an
// [*idempotency.CorruptedRecordError]: a hash with an unknown status or a
// field that does not read, or another type, as Powertools for Python's
// Redis layer writes), which no invocation can take over until it
// expires: for an operator who has looked at it. It reads the key, and
// deletes it with one script, if it is still a hash with the status and
// lease token fields read, or still not a hash. A key that is gone, or
// that the store can read by then, is not deleted and gives
// [idempotency.ErrLeaseLost].
func (s *Store) DeleteCorrupted(ctx context.Context, key string) error {
	if key == "" {
		return errEmptyKey
	}
	if _, err := s.Get(ctx, key); !corrupted(err) {
		if err == nil || errors.Is(err, idempotency.ErrRecordNotFound) {
			return fmt.Errorf("redis: delete %q: the record is gone, or the store reads it: %w", key, idempotency.ErrLeaseLost)
		}
		return err
	}
	args := []any{"other", "", ""}
	f, err := s.client.HMGet(ctx, s.opts.KeyPrefix+key, fieldStatus, fieldLeaseToken).Result()
	switch {
	case redis.HasErrorPrefix(err, "WRONGTYPE"):
	case err != nil:
		return requestError("delete", key, err)
	default:
		str := func(v any) string { s, _ := v.(string); return s }
		args = []any{"hash", str(f[0]), str(f[1])}
	}
	return s.conditional(ctx, "delete", key, deleteCorruptedScript, args)
}

func corrupted(err error) bool {
	_, ok := errors.AsType[*idempotency.CorruptedRecordError](err)
	return ok
}
