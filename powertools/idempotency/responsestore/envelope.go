package responsestore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// The envelope is how the store keeps a response it has changed, in the
// record's Response, in place of the response (docs/large-and-sensitive-responses.md
// draws it):
//
//	magic    4 bytes   0x89 'I' 'D' 'R'
//	version  1 byte    1
//	flags    1 byte    flagGzip | flagKMS or flagAEAD | flagS3; no other bit
//	size     uvarint   the length of the response itself
//	if flagKMS: uvarint n, n bytes: the data key, as KMS encrypted it
//	if flagS3:  uvarint n, n bytes: the bucket; uvarint n, n bytes: the
//	            object key; uvarint: the object's length; 32 bytes: its SHA-256
//	else:       the body, to the end
//
// The body (in the record, or the object in S3) is the response, gzipped
// when flagGzip, then, when encrypted, a nonce and the AEAD's output.
// Every uvarint is in its shortest form, so that an envelope has one
// encoding.
//
// A handler's response is JSON, which never starts with 0x89; neither can
// valid UTF-8, so the DynamoDB store keeps an envelope as binary (B). A
// response that does start with the magic, which only a [idempotency.Store]
// user's own bytes could, is kept in an envelope with no flag: every
// response the store reads back means one thing.
var magic = []byte{0x89, 'I', 'D', 'R'}

const version1 = 1

// The flags of an envelope.
const (
	flagGzip byte = 1 << iota
	flagKMS
	flagAEAD
	flagS3

	flagsKnown   = flagGzip | flagKMS | flagAEAD | flagS3
	flagsEncrypt = flagKMS | flagAEAD
)

// envelope is a response as the store keeps it.
type envelope struct {
	flags   byte
	size    int    // the response's length
	dataKey []byte // flagKMS: the data key as KMS encrypted it
	body    []byte // unless flagS3
	object  object // flagS3
}

// object is where a body offloaded to S3 is, and what it must be.
type object struct {
	bucket, key string
	size        int
	sum         [32]byte // SHA-256
}

func isEnvelope(resp []byte) bool { return bytes.HasPrefix(resp, magic) }

// marshal encodes e.
func (e *envelope) marshal() []byte {
	n := len(magic) + 2 + 3*binary.MaxVarintLen64 + len(e.dataKey) + len(e.body) +
		len(e.object.bucket) + len(e.object.key) + len(e.object.sum)
	b := make([]byte, 0, n)
	b = append(b, magic...)
	b = append(b, version1, e.flags)
	b = binary.AppendUvarint(b, uint64(e.size))
	if e.flags&flagKMS != 0 {
		b = appendBytes(b, e.dataKey)
	}
	if e.flags&flagS3 == 0 {
		return append(b, e.body...)
	}
	b = appendBytes(b, []byte(e.object.bucket))
	b = appendBytes(b, []byte(e.object.key))
	b = binary.AppendUvarint(b, uint64(e.object.size))
	return append(b, e.object.sum[:]...)
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// parseEnvelope decodes b, which starts with the magic, or says why it
// cannot: the caller reports a corrupted record.
func parseEnvelope(b []byte) (*envelope, error) {
	r := reader{b: b[len(magic):]}
	if v := r.byte(); r.err == nil && v != version1 {
		return nil, fmt.Errorf("envelope version %d, want %d: written by a newer version of this package?", v, version1)
	}
	e := &envelope{flags: r.byte()}
	if r.err == nil {
		switch {
		case e.flags&^flagsKnown != 0:
			return nil, fmt.Errorf("envelope flags %#02x: unknown bits", e.flags)
		case e.flags&flagsEncrypt == flagsEncrypt:
			return nil, errors.New("envelope flags: both KMS and AEAD")
		}
	}
	e.size = r.length()
	if e.flags&flagKMS != 0 {
		e.dataKey = r.bytes()
	}
	if e.flags&flagS3 == 0 {
		e.body = r.rest()
	} else {
		e.object.bucket = string(r.bytes())
		e.object.key = string(r.bytes())
		e.object.size = r.length()
		copy(e.object.sum[:], r.next(len(e.object.sum)))
		if r.err == nil && len(r.b) > 0 {
			return nil, fmt.Errorf("envelope: %d bytes after its end", len(r.b))
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return e, nil
}

// reader reads an envelope; its first error sticks.
type reader struct {
	b   []byte
	err error
}

var errTruncated = errors.New("envelope truncated")

func (r *reader) next(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = errTruncated
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() byte {
	if v := r.next(1); v != nil {
		return v[0]
	}
	return 0
}

// length reads a uvarint in its shortest form that fits in an int.
func (r *reader) length() int {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	switch {
	case n == 0:
		r.err = errTruncated
	case n < 0 || v > uint64(maxLength):
		r.err = errors.New("envelope: length out of range")
	case n > 1 && r.b[n-1] == 0:
		r.err = errors.New("envelope: length not in its shortest form")
	}
	if r.err != nil {
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

// maxLength bounds every length in an envelope: 1 GiB is far more than a
// Lambda response (6 MB), and it keeps an int on every platform.
const maxLength = 1 << 30

func (r *reader) bytes() []byte { return r.next(r.length()) }

func (r *reader) rest() []byte {
	if r.err != nil {
		return nil
	}
	v := r.b
	r.b = nil
	return v
}
