package responsestore

import (
	"crypto/cipher"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Option configures the store that [New] returns. New checks every option
// and returns a [*idempotency.ConfigError] naming the first bad one. A nil
// Option is ignored.
type Option func(*options)

// Defaults.
const (
	// DefaultOffloadThreshold is the largest body [WithS3] leaves in the
	// record: 350 KiB, which leaves 50 KiB of DynamoDB's 400 KiB item
	// for the record's other attributes, whatever their names and key.
	DefaultOffloadThreshold = 350 * 1024
	// DefaultObjectPrefix starts every object key in the bucket: the
	// prefix a lifecycle rule matches.
	DefaultObjectPrefix = "idempotency/"
)

// functionNameEnv is set by Lambda to the function's name.
const functionNameEnv = "AWS_LAMBDA_FUNCTION_NAME"

type options struct {
	compressAt *int

	s3        S3Client
	bucket    string
	s3Set     bool
	offloadAt *int
	prefix    *string

	kms        KMSClient
	kmsKeyID   string
	kmsSet     bool
	keyMaxAge  *time.Duration
	keyMaxUses *int64
	aead       cipher.AEAD
	aeadSet    bool
	function   *string

	logger *slog.Logger
}

// WithCompression gzips every response of at least minSize bytes, before
// it is encrypted and before the offload threshold is applied, and keeps
// the gzipped form only when it is smaller. JSON of tens of kilobytes
// typically shrinks to a fifth or less; under a few kilobytes, gzip's fixed
// cost (some 40 µs) buys little, so 4096 is a good threshold to start
// with. Default: no compression. minSize must not be negative.
func WithCompression(minSize int) Option {
	return func(o *options) { o.compressAt = &minSize }
}

// WithS3 offloads to the bucket, with client, the responses whose body
// (after compression and encryption) is over the offload threshold
// ([WithOffloadThreshold]), or that the inner store refuses as too large.
// The object is written before the record that points to it; the record
// keeps its location, length and SHA-256, and a replay reads it back and
// checks them. The store deletes no object: a lifecycle rule on the bucket
// does, no sooner than the records expire (see the package
// documentation). Default: none: a response too large for the inner store
// is not stored, and duplicates get a [*idempotency.ResponseNotStoredError].
func WithS3(client S3Client, bucket string) Option {
	return func(o *options) { o.s3, o.bucket, o.s3Set = client, bucket, true }
}

// WithOffloadThreshold sets the largest body, in bytes, that [WithS3]
// leaves in the record. Default [DefaultOffloadThreshold]; 0 offloads
// every response. It needs WithS3.
func WithOffloadThreshold(n int) Option {
	return func(o *options) { o.offloadAt = &n }
}

// WithObjectPrefix sets what every object key starts with. Default
// [DefaultObjectPrefix]. It needs WithS3.
func WithObjectPrefix(prefix string) Option {
	return func(o *options) { o.prefix = &prefix }
}

// WithKMS encrypts every response with envelope encryption: AES-256-GCM
// under a data key that AWS KMS makes with the KMS key keyID
// (GenerateDataKey; a key ID, key ARN, alias name or alias ARN), whose
// KMS-encrypted copy the record keeps. A replay has KMS decrypt it
// (Decrypt, naming keyID: a record encrypted under another KMS key does
// not open). Data keys are cached ([WithDataKeyCache]). The encryption
// context is {[EncryptionContextKey]: the function name}, and the
// ciphertext is bound to the function and the record key. Default: no
// encryption. Not with [WithAEAD].
func WithKMS(client KMSClient, keyID string) Option {
	return func(o *options) { o.kms, o.kmsKeyID, o.kmsSet = client, keyID, true }
}

// WithDataKeyCache bounds how long, and for how many responses, a data
// key from KMS is used before another is asked for; a key decrypted for
// replays is kept for maxAge too, at most 100 of them. Default
// [DefaultDataKeyMaxAge] and [DefaultDataKeyMaxUses]; maxAge 0 or maxUses 1
// asks KMS for a key per response. It needs [WithKMS].
func WithDataKeyCache(maxAge time.Duration, maxUses int64) Option {
	return func(o *options) { o.keyMaxAge, o.keyMaxUses = &maxAge, &maxUses }
}

// WithAEAD encrypts every response with aead, under a random nonce of
// aead.NonceSize() bytes, binding the ciphertext to the function and the
// record key (its additional data). For a key the function holds itself,
// such as one from AWS Secrets Manager: cipher.NewGCM(aes.NewCipher(key))
// with a 32-byte key. With random 96-bit nonces, AES-GCM is good for 2^32
// responses per key. Default: no encryption. Not with [WithKMS].
func WithAEAD(aead cipher.AEAD) Option {
	return func(o *options) { o.aead, o.aeadSet = aead, true }
}

// WithFunctionName sets the function name that ciphertexts are bound to,
// and that the KMS encryption context holds. Functions that share records
// (the same key prefix) must use one name. Default: the value of
// AWS_LAMBDA_FUNCTION_NAME; [WithKMS] needs one.
func WithFunctionName(name string) Option {
	return func(o *options) { o.function = &name }
}

// WithLogger sets where the store logs a response it could not encrypt or
// offload, which the record is then completed without. Default
// slog.Default() at the time of logging.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// build applies opts to s, or returns the first bad one.
func (s *store) build(opts []Option) error {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	bad := func(name, msg string) error {
		return &idempotency.ConfigError{Name: name, Err: errors.New(msg)}
	}
	s.compressAt, s.logger = -1, o.logger
	if o.compressAt != nil {
		if *o.compressAt < 0 {
			return bad("responsestore.WithCompression", "minSize must not be negative")
		}
		s.compressAt = *o.compressAt
	}

	switch {
	case o.s3Set && o.s3 == nil:
		return bad("responsestore.WithS3", "nil client")
	case o.s3Set && o.bucket == "":
		return bad("responsestore.WithS3", "empty bucket name")
	case !o.s3Set && o.offloadAt != nil:
		return bad("responsestore.WithOffloadThreshold", "needs WithS3")
	case !o.s3Set && o.prefix != nil:
		return bad("responsestore.WithObjectPrefix", "needs WithS3")
	case o.offloadAt != nil && *o.offloadAt < 0:
		return bad("responsestore.WithOffloadThreshold", "must not be negative")
	}
	s.s3, s.bucket, s.offloadAt, s.prefix = o.s3, o.bucket, DefaultOffloadThreshold, DefaultObjectPrefix
	if o.offloadAt != nil {
		s.offloadAt = *o.offloadAt
	}
	if o.prefix != nil {
		s.prefix = *o.prefix
	}

	s.function = os.Getenv(functionNameEnv)
	if o.function != nil {
		s.function = *o.function
	}
	maxAge, maxUses := DefaultDataKeyMaxAge, int64(DefaultDataKeyMaxUses)
	if o.keyMaxAge != nil {
		maxAge, maxUses = *o.keyMaxAge, *o.keyMaxUses
	}
	switch {
	case o.kmsSet && o.aeadSet:
		return bad("responsestore.WithKMS", "not with WithAEAD: choose one encryption")
	case o.kmsSet && o.kms == nil:
		return bad("responsestore.WithKMS", "nil client")
	case o.kmsSet && o.kmsKeyID == "":
		return bad("responsestore.WithKMS", "empty key ID")
	case o.kmsSet && s.function == "":
		return bad("responsestore.WithFunctionName", "WithKMS needs a function name for the encryption context: "+functionNameEnv+" is not set")
	case o.aeadSet && o.aead == nil:
		return bad("responsestore.WithAEAD", "nil AEAD")
	case !o.kmsSet && o.keyMaxAge != nil:
		return bad("responsestore.WithDataKeyCache", "needs WithKMS")
	case maxAge < 0:
		return bad("responsestore.WithDataKeyCache", "maxAge must not be negative")
	case maxUses < 1:
		return bad("responsestore.WithDataKeyCache", "maxUses must be at least 1")
	}
	switch {
	case o.kmsSet:
		s.sealer = newKMSSealer(o.kms, o.kmsKeyID, s.function, maxAge, maxUses)
	case o.aeadSet:
		s.sealer = aeadSealer{o.aead}
	}
	return nil
}
