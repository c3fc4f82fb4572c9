package responsestore

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
)

// sealer encrypts bodies: with a data key from KMS (kmsSealer), or with the
// user's AEAD (aeadSealer).
type sealer interface {
	// flag is the envelope flag of what the sealer writes.
	flag() byte
	// seal encrypts plaintext, authenticating aad with it. dataKey is
	// what the envelope must keep for open, if anything.
	seal(ctx context.Context, plaintext, aad []byte) (dataKey, sealed []byte, err error)
	// open reverses seal. An error that wraps errCannotDecrypt means the
	// ciphertext cannot be opened, with this key, under aad: a corrupted
	// record. Any other is a failure that may pass (KMS unreachable).
	open(ctx context.Context, dataKey, sealed, aad []byte) ([]byte, error)
}

// errCannotDecrypt marks an open that failed for the ciphertext's sake:
// tampered, moved to another record, or encrypted under another key.
var errCannotDecrypt = errors.New("cannot decrypt")

// additionalData is what a response's ciphertext is bound to, authenticated
// by the AEAD with it: the envelope's meaning of the plaintext (gzipped or
// not, its length), the function and the record key. A ciphertext copied
// to another record, or read by another function, does not open. The
// fields are length-prefixed, so no two bindings encode alike.
func additionalData(flags byte, size int, function, key string) []byte {
	b := make([]byte, 0, len(aadLabel)+1+3*binary.MaxVarintLen64+len(function)+len(key))
	b = append(b, aadLabel...)
	b = append(b, flags&(flagGzip|flagsEncrypt))
	b = binary.AppendUvarint(b, uint64(size))
	b = appendBytes(b, []byte(function))
	return appendBytes(b, []byte(key))
}

// aadLabel starts the additional data, so that no other use of the same
// key makes ciphertexts that open here.
const aadLabel = "gopowertools/idempotency/responsestore v1\x00"

// sealAEAD encrypts plaintext with a, under a random nonce of the size a
// asks for, which it prepends.
func sealAEAD(a cipher.AEAD, plaintext, aad []byte) []byte {
	out := make([]byte, a.NonceSize(), a.NonceSize()+len(plaintext)+a.Overhead())
	rand.Read(out) // never fails (crypto/rand)
	return a.Seal(out, out, plaintext, aad)
}

// openAEAD reverses sealAEAD.
func openAEAD(a cipher.AEAD, sealed, aad []byte) ([]byte, error) {
	n := a.NonceSize()
	if len(sealed) < n+a.Overhead() {
		return nil, errCannotDecrypt
	}
	plain, err := a.Open(nil, sealed[:n], sealed[n:], aad)
	if err != nil {
		return nil, errCannotDecrypt
	}
	return plain, nil
}

// aeadSealer encrypts with the user's AEAD ([WithAEAD]).
type aeadSealer struct{ aead cipher.AEAD }

func (aeadSealer) flag() byte { return flagAEAD }

func (s aeadSealer) seal(_ context.Context, plaintext, aad []byte) ([]byte, []byte, error) {
	return nil, sealAEAD(s.aead, plaintext, aad), nil
}

func (s aeadSealer) open(_ context.Context, _, sealed, aad []byte) ([]byte, error) {
	return openAEAD(s.aead, sealed, aad)
}
