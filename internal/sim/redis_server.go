package sim

import (
	"slices"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file is what redis's Lua scripts (scripts.go) do to a
// primary's data, one operation at a time, each atomic on its key: the
// model's server, with no network and no replica (redis_model.go adds
// those). differential_test.go runs the same operations on it and on the
// real redis.Store on Valkey.

// redisRecord is a record's hash and its key's TTL.
type redisRecord struct {
	rec      idempotency.Record
	expireAt time.Time // on the server's clock; zero: no TTL
}

// redisServer is a primary's records.
type redisServer struct {
	data map[string]*redisRecord
	now  func() time.Time // the server's clock
	// written is told of each write (after is nil for a delete); expired
	// of each key the server expires.
	written func(key string, before, after *redisRecord)
	expired func(key string, x *redisRecord)
}

// get is the key's record, expired as the server expires a key whose TTL
// has passed.
func (r *redisServer) get(key string) *redisRecord {
	x := r.data[key]
	if x != nil && !x.expireAt.IsZero() && !x.expireAt.After(r.now()) {
		delete(r.data, key)
		if r.expired != nil {
			r.expired(key, x)
		}
		return nil
	}
	return x
}

// put replaces key's record with rec (nil: deletes it), with the TTL
// record.go's ttl gives a record written at writerNow: the time left to
// its expiry, plus a minute.
func (r *redisServer) put(key string, rec *idempotency.Record, writerNow time.Time) {
	before := r.get(key)
	var x *redisRecord
	if rec != nil {
		x = &redisRecord{rec: stored(rec)}
		if !rec.Expiry.IsZero() {
			x.expireAt = r.now().Add(max(rec.Expiry.Sub(writerNow), 0) + time.Minute)
		}
		r.data[key] = x
	} else {
		delete(r.data, key)
	}
	if r.written != nil {
		r.written(key, before, x)
	}
}

// acquire is acquireScript: the live record, or rec written.
func (r *redisServer) acquire(rec *idempotency.Record, now time.Time) (existing *redisRecord) {
	if x := r.get(rec.Key); x != nil && x.rec.Live(now) {
		return x
	}
	r.put(rec.Key, rec, now)
	return nil
}

// complete is completeScript: rec written when the record carries its
// token.
func (r *redisServer) complete(rec *idempotency.Record, writerNow time.Time) bool {
	x := r.get(rec.Key)
	if x == nil || x.rec.LeaseToken != rec.LeaseToken {
		return false
	}
	r.put(rec.Key, rec, writerNow)
	return true
}

// release is releaseScript: done when there is no record, or it carries
// token and is deleted.
func (r *redisServer) release(key, token string) bool {
	x := r.get(key)
	if x == nil {
		return true
	}
	if x.rec.LeaseToken != token {
		return false
	}
	r.put(key, nil, time.Time{})
	return true
}

// reclaim is reclaimScript: rec written over an UNCERTAIN record that
// carries token, or rec's own token.
func (r *redisServer) reclaim(rec *idempotency.Record, token string, writerNow time.Time) bool {
	x := r.get(rec.Key)
	if x == nil || x.rec.Status != idempotency.StatusUncertain || (x.rec.LeaseToken != token && x.rec.LeaseToken != rec.LeaseToken) {
		return false
	}
	r.put(rec.Key, rec, writerNow)
	return true
}

// stored is rec as the server keeps and returns it: the times at the
// precision of their fields (record.go), UTC, and its own bytes.
func stored(rec *idempotency.Record) idempotency.Record {
	cp := *rec
	at := func(t time.Time, unit time.Duration) time.Time {
		if t.IsZero() {
			return t
		}
		return t.Truncate(unit).UTC()
	}
	cp.Expiry = at(rec.Expiry, time.Second)
	cp.LeaseEnd = at(rec.LeaseEnd, time.Millisecond)
	cp.Deadline = at(rec.Deadline, time.Millisecond)
	cp.CompletedAt = at(rec.CompletedAt, time.Millisecond)
	cp.Response = slices.Clone(rec.Response)
	if len(cp.Response) == 0 {
		cp.Response = nil
	}
	return cp
}
