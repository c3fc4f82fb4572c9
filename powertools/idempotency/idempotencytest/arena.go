package idempotencytest

import (
	"encoding/binary"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// arena is where a table keeps its keys and packed records: byte chunks of
// a fixed size, filled one after the other. One growing slice would do the
// same with less code, but growing it copies every record each time it
// doubles, and a copy of megabytes cannot be interrupted: the collector
// waits for it, spinning, and that wait was a large part of a first call's
// cost in a store of many keys. Chunks are never copied whole.
//
// Each entry in a chunk is a header (the slot that owns it and its extent,
// four bytes each), the key, and the packed record with its room to grow.
// A rewrite that does not fit leaves a dead entry behind; a chunk more than
// half dead has its live entries moved to the open chunk and is reused, so
// the arena stays within about twice the live bytes, plus a chunk.
type arena struct {
	chunks  []chunk
	open    int32 // the chunk new entries go to, when hasOpen
	hasOpen bool
	spare   []int32 // empty chunks of chunkSize bytes, for reuse
	holes   []int32 // chunks whose memory was let go, for reuse of the index
	closed  []int32 // chunks filled since the last tidy, to check
}

type chunk struct {
	buf  []byte // cap: the chunk's size; len: the bytes handed out
	dead int    // bytes of buf that no slot owns
}

const (
	chunkSize = 64 << 10
	// An entry larger than bigEntry gets a chunk of its own, of its size,
	// which is let go when the entry dies.
	bigEntry  = chunkSize / 4
	headerLen = 8
	maxSpare  = 4 // empty chunks kept for reuse; more are let go
)

// place writes rec, with room for need bytes of packed record, as slot i's
// new entry, and points the slot at it. The slot's old entry, if any, is
// the caller's to kill.
func (t *table) place(i int32, rec *idempotency.Record, need int) {
	extent := headerLen + len(rec.Key) + need
	c, off := t.alloc(extent)
	buf := t.chunks[c].buf
	binary.LittleEndian.PutUint32(buf[off:], uint32(i))
	binary.LittleEndian.PutUint32(buf[off+4:], uint32(extent))
	at := off + headerLen + copy(buf[off+headerLen:], rec.Key)
	n := len(appendPacked(buf[at:at:at+need], rec))
	*t.slot(i) = slot{
		chunk: c, off: int32(off + headerLen),
		keyLen: int32(len(rec.Key)), dataLen: int32(n), dataCap: int32(need), used: true,
	}
}

// growLast gives the entry of s room for need bytes of record where it
// is, when it is the last entry of the open chunk and the chunk has the
// room. That is the common case of a new key: its IN_PROGRESS record was
// the last thing written when its larger COMPLETE record comes.
func (t *table) growLast(s *slot, need int) bool {
	if !t.hasOpen || s.chunk != t.open {
		return false
	}
	ch := &t.chunks[t.open]
	start, end := int(s.off)-headerLen, int(s.off+s.keyLen+s.dataCap)
	if end != len(ch.buf) || int(s.off+s.keyLen)+need > cap(ch.buf) {
		return false
	}
	ch.buf = ch.buf[:int(s.off+s.keyLen)+need]
	binary.LittleEndian.PutUint32(ch.buf[start+4:], uint32(len(ch.buf)-start))
	s.dataCap = int32(need)
	return true
}

// alloc hands out n bytes for an entry: the chunk and the offset.
func (t *table) alloc(n int) (int32, int) {
	if n > bigEntry {
		c := t.newChunk(n)
		t.chunks[c].buf = t.chunks[c].buf[:n]
		return c, 0
	}
	if !t.hasOpen || cap(t.chunks[t.open].buf)-len(t.chunks[t.open].buf) < n {
		if t.hasOpen {
			t.closed = append(t.closed, t.open)
		}
		t.open, t.hasOpen = t.newChunk(chunkSize), true
	}
	ch := &t.chunks[t.open]
	off := len(ch.buf)
	ch.buf = ch.buf[:off+n]
	return t.open, off
}

// newChunk returns an empty chunk of size bytes.
func (t *table) newChunk(size int) int32 {
	if n := len(t.spare); size == chunkSize && n > 0 {
		c := t.spare[n-1]
		t.spare = t.spare[:n-1]
		return c
	}
	if n := len(t.holes); n > 0 {
		c := t.holes[n-1]
		t.holes = t.holes[:n-1]
		t.chunks[c] = chunk{buf: make([]byte, 0, size)}
		return c
	}
	t.chunks = append(t.chunks, chunk{buf: make([]byte, 0, size)})
	return int32(len(t.chunks) - 1)
}

// kill marks an entry of extent bytes in chunk c as dead. The open chunk
// is only checked once it is closed (tidy).
func (t *table) kill(c int32, extent int) {
	ch := &t.chunks[c]
	ch.dead += extent
	if t.hasOpen && c == t.open {
		if ch.dead == len(ch.buf) {
			ch.buf, ch.dead = ch.buf[:0], 0 // emptied: start it over
		}
		return
	}
	t.closed = append(t.closed, c)
}

// tidy checks the chunks closed or killed in since the last tidy: an empty
// one is released, one more than half dead is compacted. Compacting can
// close the open chunk, which the loop then checks too.
func (t *table) tidy() {
	for len(t.closed) > 0 {
		n := len(t.closed) - 1
		c := t.closed[n]
		t.closed = t.closed[:n]
		ch := &t.chunks[c]
		switch {
		case t.hasOpen && c == t.open, len(ch.buf) == 0:
			// Open again, or released already: a chunk is listed once per
			// kill.
		case ch.dead == len(ch.buf):
			t.release(c)
		case 2*ch.dead > len(ch.buf):
			t.compact(c)
		}
	}
}

// compact moves the live entries of chunk c, which is not the open chunk,
// to the open chunk, with no room to grow, and releases c.
func (t *table) compact(c int32) {
	buf := t.chunks[c].buf
	for pos := 0; pos < len(buf); {
		i := int32(binary.LittleEndian.Uint32(buf[pos:]))
		extent := int(binary.LittleEndian.Uint32(buf[pos+4:]))
		if s := t.slot(i); s.used && s.chunk == c && int(s.off) == pos+headerLen {
			size := int(s.keyLen + s.dataLen)
			nc, off := t.alloc(headerLen + size)
			dst := t.chunks[nc].buf
			binary.LittleEndian.PutUint32(dst[off:], uint32(i))
			binary.LittleEndian.PutUint32(dst[off+4:], uint32(headerLen+size))
			copy(dst[off+headerLen:], buf[pos+headerLen:pos+headerLen+size])
			s.chunk, s.off, s.dataCap = nc, int32(off+headerLen), s.dataLen
		}
		pos += extent
	}
	t.release(c)
}

// release empties chunk c, keeping its memory for reuse when it is of the
// usual size and few are kept.
func (t *table) release(c int32) {
	ch := &t.chunks[c]
	if cap(ch.buf) == chunkSize && len(t.spare) < maxSpare {
		ch.buf, ch.dead = ch.buf[:0], 0
		t.spare = append(t.spare, c)
		return
	}
	*ch = chunk{}
	t.holes = append(t.holes, c)
}

// arenaBytes returns the memory the arena holds, for tests.
func (t *table) arenaBytes() int {
	n := 0
	for _, ch := range t.chunks {
		n += cap(ch.buf)
	}
	return n
}
