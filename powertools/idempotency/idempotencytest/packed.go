package idempotencytest

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// packed is a record as a [Store] keeps it: all its fields but the key as
// bytes, so that the store's records hold no pointers for the garbage
// collector (see table). It keeps times as DynamoDB does: Expiry in whole
// seconds, LeaseEnd in whole milliseconds.
//
// The layout: a flags byte; Expiry as Unix seconds and LeaseEnd as Unix
// milliseconds, eight bytes each; Status, LeaseToken and PayloadHash, each
// as a uvarint length and its bytes; and the Response, the rest.
type packed []byte

const (
	hasExpiry   = 1 << iota // Expiry is set
	hasLeaseEnd             // LeaseEnd is set
	omitted                 // ResponseOmitted
	hasResponse             // a non-empty Response (DynamoDB keeps no empty data attribute)

	fieldsAt = 17 // where Status starts: after the flags and the two times
)

// appendPacked appends rec, but its key, packed.
func appendPacked(p []byte, rec *idempotency.Record) []byte {
	var flags byte
	var expiry, leaseEnd int64
	if !rec.Expiry.IsZero() {
		flags |= hasExpiry
		expiry = rec.Expiry.Unix()
	}
	if !rec.LeaseEnd.IsZero() {
		flags |= hasLeaseEnd
		leaseEnd = rec.LeaseEnd.UnixMilli()
	}
	if rec.ResponseOmitted {
		flags |= omitted
	}
	if len(rec.Response) > 0 {
		flags |= hasResponse
	}
	p = append(p, flags)
	p = binary.LittleEndian.AppendUint64(p, uint64(expiry))
	p = binary.LittleEndian.AppendUint64(p, uint64(leaseEnd))
	for _, s := range [...]string{string(rec.Status), rec.LeaseToken, rec.PayloadHash} {
		p = binary.AppendUvarint(p, uint64(len(s)))
		p = append(p, s...)
	}
	return append(p, rec.Response...)
}

// packedSize returns the length of rec packed.
func packedSize(rec *idempotency.Record) int {
	n := fieldsAt + len(rec.Response)
	for _, s := range [...]string{string(rec.Status), rec.LeaseToken, rec.PayloadHash} {
		n += len(s) + 1
		for x := len(s); x >= 0x80; x >>= 7 {
			n++ // one more byte of uvarint length
		}
	}
	return n
}

// fields returns Status, LeaseToken, PayloadHash and Response, sharing p.
func (p packed) fields() (status, token, hash, response []byte) {
	rest := []byte(p[fieldsAt:])
	var f [3][]byte
	for i := range f {
		n, size := binary.Uvarint(rest)
		f[i], rest = rest[size:size+int(n)], rest[size+int(n):]
	}
	return f[0], f[1], f[2], rest
}

func (p packed) status() []byte     { s, _, _, _ := p.fields(); return s }
func (p packed) leaseToken() []byte { _, t, _, _ := p.fields(); return t }

func (p packed) expiry() time.Time {
	if p[0]&hasExpiry == 0 {
		return time.Time{}
	}
	return time.Unix(int64(binary.LittleEndian.Uint64(p[1:9])), 0).UTC()
}

func (p packed) leaseEnd() time.Time {
	if p[0]&hasLeaseEnd == 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(binary.LittleEndian.Uint64(p[9:17]))).UTC()
}

// replaceable is the DynamoDB store's Acquire condition: no live record,
// as idempotency.Record.Live says, on the packed bytes.
// The times are kept truncated, and for a whole number of seconds (or
// milliseconds) e, now < e exactly when the truncated now is.
func (p packed) replaceable(now time.Time) bool {
	if p[0]&hasExpiry != 0 && !now.Before(p.expiry()) {
		return true
	}
	return string(p.status()) == string(idempotency.StatusInProgress) && !now.Before(p.leaseEnd())
}

// check returns the error the DynamoDB store gives for an item it cannot
// decode, for the one kind of damage a Record can carry: an unknown status.
func (p packed) check(key string) error {
	switch knownStatus(p.status()) {
	case idempotency.StatusInProgress, idempotency.StatusComplete, idempotency.StatusUncertain:
		return nil
	}
	return &idempotency.CorruptedRecordError{Key: key, Reason: fmt.Sprintf("unknown status %q", p.status())}
}

// record returns the record key as a new Record, sharing nothing with p.
func (p packed) record(key string) *idempotency.Record {
	status, token, hash, response := p.fields()
	rec := &idempotency.Record{
		Key:             key,
		Status:          knownStatus(status),
		Expiry:          p.expiry(),
		LeaseEnd:        p.leaseEnd(),
		LeaseToken:      string(token),
		ResponseOmitted: p[0]&omitted != 0,
		PayloadHash:     string(hash),
	}
	if p[0]&hasResponse != 0 {
		rec.Response = append([]byte(nil), response...)
	}
	return rec
}

// knownStatus returns s as a Status, without allocating for the known ones.
func knownStatus(s []byte) idempotency.Status {
	for _, known := range [...]idempotency.Status{idempotency.StatusInProgress, idempotency.StatusComplete, idempotency.StatusUncertain} {
		if string(s) == string(known) {
			return known
		}
	}
	return idempotency.Status(s)
}
