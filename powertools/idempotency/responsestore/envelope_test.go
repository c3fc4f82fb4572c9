package responsestore

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"
)

func sampleEnvelopes() map[string]*envelope {
	obj := object{bucket: "bucket", key: "idempotency/abc/token/def", size: 1234, sum: sha256.Sum256([]byte("body"))}
	return map[string]*envelope{
		"escaped":   {size: 3, body: []byte("abc")},
		"gzip":      {flags: flagGzip, size: 100, body: []byte("gz")},
		"aead":      {flags: flagAEAD, size: 5, body: []byte("nonce+ciphertext")},
		"kms":       {flags: flagKMS, size: 5, dataKey: []byte("encrypted data key"), body: []byte("nonce+ciphertext")},
		"gzip-kms":  {flags: flagGzip | flagKMS, size: 1 << 20, dataKey: []byte("k"), body: []byte("c")},
		"s3":        {flags: flagS3, size: 1234, object: obj},
		"all":       {flags: flagGzip | flagKMS | flagS3, size: 5 << 20, dataKey: bytes.Repeat([]byte("k"), 200), object: obj},
		"aead-s3":   {flags: flagAEAD | flagS3, size: 0, object: obj},
		"empty":     {size: 0},
		"long-size": {size: maxLength, body: nil},
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	t.Parallel()
	for name, e := range sampleEnvelopes() {
		t.Run(name, func(t *testing.T) {
			b := e.marshal()
			if !isEnvelope(b) {
				t.Fatalf("%x does not start with the magic", b)
			}
			got, err := parseEnvelope(b)
			if err != nil {
				t.Fatal(err)
			}
			if got.flags != e.flags || got.size != e.size || !bytes.Equal(got.dataKey, e.dataKey) ||
				!bytes.Equal(got.body, e.body) || got.object != e.object {
				t.Fatalf("parse(marshal(%+v)) = %+v", e, got)
			}
		})
	}
}

func TestEnvelopeRefused(t *testing.T) {
	t.Parallel()
	m := string(magic)
	tests := map[string]string{
		"no-version":       m,
		"version-0":        m + "\x00\x00\x00",
		"version-2":        m + "\x02\x00\x00",
		"no-flags":         m + "\x01",
		"unknown-flag":     m + "\x01\x10\x00",
		"kms-and-aead":     m + "\x01\x06\x00",
		"no-size":          m + "\x01\x00",
		"size-truncated":   m + "\x01\x00\x80",
		"size-overlong":    m + "\x01\x00\x80\x00",
		"size-too-large":   m + "\x01\x00\x81\x80\x80\x80\x04",
		"size-overflows":   m + "\x01\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f",
		"kms-key-missing":  m + "\x01\x02\x05",
		"kms-key-short":    m + "\x01\x02\x05\x03ab",
		"s3-bucket-short":  m + "\x01\x08\x05\x06buck",
		"s3-key-missing":   m + "\x01\x08\x05\x01b",
		"s3-sum-short":     m + "\x01\x08\x05\x01b\x01k\x05" + strings.Repeat("s", 31),
		"s3-trailing-byte": m + "\x01\x08\x05\x01b\x01k\x05" + strings.Repeat("s", 32) + "x",
	}
	for name, b := range tests {
		t.Run(name, func(t *testing.T) {
			if e, err := parseEnvelope([]byte(b)); err == nil {
				t.Fatalf("parseEnvelope(%q) = %+v, want an error", b, e)
			}
		})
	}
}

// An envelope that parses has one encoding: marshal gives back the bytes
// it was parsed from. Whatever the bytes, parsing does not panic.
func FuzzParseEnvelope(f *testing.F) {
	for _, e := range sampleEnvelopes() {
		f.Add(e.marshal())
	}
	f.Add(append(bytes.Clone(magic), 1, 0x08, 5, 1, 'b', 1, 'k', 5))
	f.Fuzz(func(t *testing.T, b []byte) {
		b = append(bytes.Clone(magic), b...)
		e, err := parseEnvelope(b)
		if err != nil {
			return
		}
		if again := e.marshal(); !bytes.Equal(again, b) {
			t.Fatalf("parse then marshal of %x gives %x", b, again)
		}
	})
}

// The additional data of two different bindings differ, even when their
// parts, joined, would read the same.
func TestAdditionalDataUnambiguous(t *testing.T) {
	t.Parallel()
	a := additionalData(flagAEAD, 10, "fn#", "k")
	b := additionalData(flagAEAD, 10, "fn", "#k")
	if bytes.Equal(a, b) {
		t.Fatal("two bindings share additional data")
	}
	if !bytes.Equal(additionalData(flagAEAD|flagS3, 10, "fn", "k"), additionalData(flagAEAD, 10, "fn", "k")) {
		t.Fatal("where the body is kept changes the additional data; it must not, since it is decided after encryption")
	}
	if bytes.Equal(additionalData(flagAEAD|flagGzip, 10, "fn", "k"), additionalData(flagAEAD, 10, "fn", "k")) {
		t.Fatal("the gzip flag is not in the additional data")
	}
}
