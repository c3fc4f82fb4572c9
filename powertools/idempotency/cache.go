package idempotency

import (
	"bytes"
	"container/list"
	"sync"
	"time"
)

// cache is a bounded least-recently-used cache of COMPLETED records, kept in
// the Lambda execution environment between invocations (see
// [WithLocalCache]). It checks expiry when read instead of sweeping in the
// background, because Lambda freezes the process between invocations. A nil
// *cache is a cache that is off.
type cache struct {
	mu      sync.Mutex
	size    int
	order   *list.List // of *Record, most recently used first
	entries map[string]*list.Element
}

func newCache(size int) *cache {
	if size <= 0 {
		return nil
	}
	return &cache{size: size, order: list.New(), entries: make(map[string]*list.Element, size)}
}

// get returns a copy of the COMPLETED record for key if one is cached and
// not expired at now: its Response is the caller's, who may return it to
// a caller that changes it.
func (c *cache) get(key string, now time.Time) *Record {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil
	}
	rec := el.Value.(*Record)
	if !rec.Live(now) {
		c.order.Remove(el)
		delete(c.entries, key)
		return nil
	}
	c.order.MoveToFront(el)
	return copyRecord(rec)
}

// put caches a copy of rec, a COMPLETED record, evicting the least recently
// used record when full. The copy, Response bytes included, keeps the
// cache independent of what the store, a replay hook or the caller that
// gets rec.Response later does with rec.
func (c *cache) put(rec *Record) {
	if c == nil || rec.Status != StatusComplete {
		return
	}
	cp := copyRecord(rec)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[rec.Key]; ok {
		el.Value = cp
		c.order.MoveToFront(el)
		return
	}
	c.entries[rec.Key] = c.order.PushFront(cp)
	if c.order.Len() > c.size {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(*Record).Key)
	}
}

// copyRecord returns a copy of rec with its own Response bytes.
func copyRecord(rec *Record) *Record {
	cp := *rec
	cp.Response = bytes.Clone(rec.Response)
	return &cp
}
