package idempotencytest

import (
	"hash/maphash"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// table holds a [Store]'s records where the garbage collector has nothing
// to look at: keys and packed records in the chunks of an arena (see
// arena.go), found through a map from a hash of the key to a slot. A map
// keyed by string, or records made of strings, are one object per key or
// field for the collector to mark on every cycle; with thousands of
// records, as a benchmark's store holds, that marking was most of what a
// first call cost over the bare handler. The zero table is empty and ready
// to use.
type table struct {
	seed  maphash.Seed
	hash  func(seed maphash.Seed, key string) uint64 // maphash.String; a test makes it collide
	index map[uint64]int32                           // hash of the key -> slot
	// overflow holds the slots of keys whose hash is taken in index by
	// another key. With 64-bit hashes it stays empty in practice, but a
	// collision must not mix two keys up.
	overflow map[string]int32

	// The slots live in fixed pages rather than one slice, so that a
	// growing table never copies them all: a copy of megabytes cannot be
	// interrupted, and stalls the collector while it runs.
	slotPages []*[slotPage]slot
	nslots    int32
	free      []int32 // unused slots

	// missed is what the last find learned about a key it did not find,
	// so that the put that usually follows (Acquire of a new key) indexes
	// it without hashing it and probing the index again.
	missed struct {
		key   string
		hash  uint64
		taken bool // the hash is in index, for another key
	}
	// recent is the key last found or added, and its slot: the Complete
	// (or Release) that follows an Acquire finds it with no hashing and no
	// probe. A key keeps its slot until it is deleted.
	recent struct {
		key  string
		slot int32
	}

	arena
}

const slotPage = 1024

// slot places a key and its packed record in the arena: the key at off in
// chunk, the record just after it. dataCap is the room the record has
// there; a rewrite that fits stays in place.
type slot struct {
	chunk, off               int32
	keyLen, dataLen, dataCap int32
	used                     bool
}

// extent is the bytes the slot's entry takes in its chunk.
func (s *slot) extent() int { return headerLen + int(s.keyLen+s.dataCap) }

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

func (t *table) slot(i int32) *slot { return &t.slotPages[i/slotPage][i%slotPage] }

func (t *table) keyBytes(s *slot) []byte {
	return t.chunks[s.chunk].buf[s.off : s.off+s.keyLen]
}

func (t *table) key(i int32) string { return string(t.keyBytes(t.slot(i))) }

func (t *table) data(i int32) packed {
	s := t.slot(i)
	at := s.off + s.keyLen
	return packed(t.chunks[s.chunk].buf[at : at+s.dataLen : at+s.dataLen])
}

// find returns the slot of key, or false.
func (t *table) find(key string) (int32, bool) {
	if key == t.recent.key && key != "" {
		return t.recent.slot, true
	}
	t.init()
	h := t.hash(t.seed, key)
	i, taken := t.index[h]
	found := taken && string(t.keyBytes(t.slot(i))) == key
	if taken && !found {
		i, found = t.overflow[key]
	}
	if !found {
		t.missed.key, t.missed.hash, t.missed.taken = key, h, taken
		return 0, false
	}
	t.recent.key, t.recent.slot = key, i
	return i, true
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
	need := packedSize(rec)
	if !ok {
		i = t.newSlot(rec.Key)
		t.place(i, rec, need)
		t.tidy()
		return
	}
	s := t.slot(i)
	if need <= int(s.dataCap) || t.growLast(s, need) {
		at := s.off + s.keyLen
		buf := t.chunks[s.chunk].buf
		s.dataLen = int32(len(appendPacked(buf[at:at:at+s.dataCap], rec)))
		return
	}
	old, extent := s.chunk, s.extent()
	t.place(i, rec, need)
	t.kill(old, extent)
	t.tidy()
}

// newSlot takes a slot for key and indexes it.
func (t *table) newSlot(key string) int32 {
	var i int32
	if n := len(t.free); n > 0 {
		i, t.free = t.free[n-1], t.free[:n-1]
	} else {
		i = t.nslots
		if i%slotPage == 0 {
			t.slotPages = append(t.slotPages, new([slotPage]slot))
		}
		t.nslots++
	}
	h, taken := t.missed.hash, t.missed.taken
	if t.missed.key != key {
		h = t.hash(t.seed, key)
		_, taken = t.index[h]
	}
	t.missed.key = ""
	if taken {
		t.overflow[key] = i
	} else {
		t.index[h] = i
	}
	t.recent.key, t.recent.slot = key, i
	return i
}

// delete removes key's record, if any.
func (t *table) delete(key string) {
	i, ok := t.find(key)
	if !ok {
		return
	}
	t.missed.key, t.recent.key = "", "" // the index changes
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
	s := t.slot(i)
	c, extent := s.chunk, s.extent()
	*s = slot{}
	t.free = append(t.free, i)
	t.kill(c, extent)
	t.tidy()
}

// each calls fn with every key and its packed record.
func (t *table) each(fn func(key string, p packed)) {
	for i := range t.nslots {
		if t.slot(i).used {
			fn(t.key(i), t.data(i))
		}
	}
}

// len returns the number of records.
func (t *table) len() int { return int(t.nslots) - len(t.free) }
