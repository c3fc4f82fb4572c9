package idempotencytest

import (
	"hash/maphash"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// table holds a [Store]'s records where the garbage collector has nothing
// to look at: keys and packed records in one byte slice, found through a
// map from a hash of the key to a slot. A map keyed by string, or records
// made of strings, are one object per key or field for the collector to
// mark on every cycle; with thousands of records, as a benchmark's store
// holds, that marking was most of what a first call cost over the bare
// handler. The zero table is empty and ready to use.
type table struct {
	seed  maphash.Seed
	hash  func(seed maphash.Seed, key string) uint64 // maphash.String; a test makes it collide
	index map[uint64]int32                           // hash of the key -> slot
	// overflow holds the slots of keys whose hash is taken in index by
	// another key. With 64-bit hashes it stays empty in practice, but a
	// collision must not mix two keys up.
	overflow map[string]int32
	slots    []slot
	free     []int32 // unused slots
	arena    []byte  // each used slot's key, then its packed record
	garbage  int     // bytes of arena no slot uses
}

// slot places a key and its packed record in the arena.
type slot struct {
	off, keyLen, dataLen int32
	used                 bool
}

func (t *table) init() {
	if t.index == nil {
		t.seed = maphash.MakeSeed()
		if t.hash == nil {
			t.hash = maphash.String
		}
		t.index = make(map[uint64]int32)
		t.overflow = make(map[string]int32)
	}
}

func (t *table) key(i int32) string {
	s := t.slots[i]
	return string(t.arena[s.off : s.off+s.keyLen])
}

func (t *table) data(i int32) packed {
	s := t.slots[i]
	at := s.off + s.keyLen
	return packed(t.arena[at : at+s.dataLen : at+s.dataLen])
}

// find returns the slot of key, or false.
func (t *table) find(key string) (int32, bool) {
	t.init()
	i, ok := t.index[t.hash(t.seed, key)]
	if !ok {
		return 0, false
	}
	if string(t.arena[t.slots[i].off:t.slots[i].off+t.slots[i].keyLen]) == key {
		return i, true
	}
	i, ok = t.overflow[key]
	return i, ok
}

// get returns the packed record of key, valid until the table changes.
func (t *table) get(key string) (packed, bool) {
	_, p, ok := t.lookup(key)
	return p, ok
}

// lookup returns the slot and the packed record of key, valid until the
// table changes, for a putAt that follows.
func (t *table) lookup(key string) (int32, packed, bool) {
	if i, ok := t.find(key); ok {
		return i, t.data(i), true
	}
	return 0, nil, false
}

// put stores rec under rec.Key, in its record's place when it fits.
func (t *table) put(rec *idempotency.Record) {
	i, _, ok := t.lookup(rec.Key)
	t.putAt(i, ok, rec)
}

// putAt is put for a key whose lookup gave slot i and ok; the table must
// not have changed since.
func (t *table) putAt(i int32, ok bool, rec *idempotency.Record) {
	if ok && packedSize(rec) <= int(t.slots[i].dataLen) {
		s := &t.slots[i]
		at := s.off + s.keyLen
		n := len(appendPacked(t.arena[at:at:at+s.dataLen], rec))
		t.garbage += int(s.dataLen) - n
		s.dataLen = int32(n)
		return
	}
	if ok {
		t.garbage += int(t.slots[i].keyLen + t.slots[i].dataLen)
	} else {
		i = t.newSlot(rec.Key)
	}
	off := len(t.arena)
	t.arena = append(t.arena, rec.Key...)
	t.arena = appendPacked(t.arena, rec)
	t.slots[i] = slot{off: int32(off), keyLen: int32(len(rec.Key)), dataLen: int32(len(t.arena) - off - len(rec.Key)), used: true}
	t.compact()
}

// newSlot takes a slot for key and indexes it.
func (t *table) newSlot(key string) int32 {
	var i int32
	if n := len(t.free); n > 0 {
		i, t.free = t.free[n-1], t.free[:n-1]
	} else {
		i = int32(len(t.slots))
		t.slots = append(t.slots, slot{})
	}
	h := t.hash(t.seed, key)
	if _, taken := t.index[h]; taken {
		t.overflow[key] = i
	} else {
		t.index[h] = i
	}
	return i
}

// delete removes key's record, if any.
func (t *table) delete(key string) {
	i, ok := t.find(key)
	if !ok {
		return
	}
	h := t.hash(t.seed, key)
	if j, ok := t.overflow[key]; ok && j == i {
		delete(t.overflow, key)
	} else {
		delete(t.index, h)
		// A key that collided with this one takes its place in index.
		for k, j := range t.overflow {
			if t.hash(t.seed, k) == h {
				t.index[h] = j
				delete(t.overflow, k)
				break
			}
		}
	}
	t.garbage += int(t.slots[i].keyLen + t.slots[i].dataLen)
	t.slots[i] = slot{}
	t.free = append(t.free, i)
}

// compact copies the used records to a new arena once most of the arena is
// garbage, so that a store rewriting its records keeps a bounded size.
func (t *table) compact() {
	if t.garbage < 64<<10 || t.garbage < len(t.arena)/2 {
		return
	}
	arena := make([]byte, 0, 2*(len(t.arena)-t.garbage))
	for i := range t.slots {
		s := &t.slots[i]
		if !s.used {
			continue
		}
		off := len(arena)
		arena = append(arena, t.arena[s.off:s.off+s.keyLen+s.dataLen]...)
		s.off = int32(off)
	}
	t.arena, t.garbage = arena, 0
}

// each calls fn with every key and its packed record.
func (t *table) each(fn func(key string, p packed)) {
	for i := range t.slots {
		if t.slots[i].used {
			fn(t.key(int32(i)), t.data(int32(i)))
		}
	}
}

// len returns the number of records.
func (t *table) len() int { return len(t.slots) - len(t.free) }
