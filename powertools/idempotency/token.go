package idempotency

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync/atomic"
	"time"
)

// A lease token only has to differ from every other invocation's token:
// Complete and Release are conditioned on it so that an invocation whose
// lease ended cannot touch the record of the one that took the key over,
// and Acquire takes a live IN_PROGRESS record carrying our own token for an
// earlier try of this same request. Nothing needs it to be unpredictable.
// So instead of 16 bytes from crypto/rand on every first call (about 900
// instructions, a third of the middleware's own work after hashing the key)
// a token is 8 bytes drawn once per process and an 8-byte counter, which
// starts at a random value too, in lowercase hex: 32 characters, as before.
//
//   - Within a process, no two tokens share a counter value (it would take
//     2^64 invocations to wrap).
//   - Across processes, the random halves differ: two processes agree on
//     them with odds of 1 in 2^64, and then their counters must meet too.
//   - A process cloned from a snapshot would repeat the same sequence, so
//     the time of the call is folded into the random half: two clones
//     making the same n-th token in the same nanosecond are what it would
//     take for them to collide.
var tokens = newTokenSource()

type tokenSource struct {
	random uint64        // drawn once per process
	next   atomic.Uint64 // the counter; starts at a random value
}

func newTokenSource() *tokenSource {
	var b [16]byte
	rand.Read(b[:]) // never fails: since Go 1.24 it crashes the program instead
	s := &tokenSource{random: binary.LittleEndian.Uint64(b[:8])}
	s.next.Store(binary.LittleEndian.Uint64(b[8:]))
	return s
}

// tokenLen is the length of a lease token: 16 bytes in hex.
const tokenLen = 32

// newLeaseToken returns a new lease token, unique to the invocation. now is
// the time of the call, read from the engine's clock.
func newLeaseToken(now time.Time) string {
	var t [tokenLen]byte
	tokens.put(t[:], now)
	return string(t[:])
}

// put writes a new token made at now to dst, which holds tokenLen bytes.
func (s *tokenSource) put(dst []byte, now time.Time) {
	var b [tokenLen / 2]byte
	binary.BigEndian.PutUint64(b[:8], s.random^uint64(now.UnixNano()))
	binary.BigEndian.PutUint64(b[8:], s.next.Add(1))
	hex.Encode(dst, b[:])
}
