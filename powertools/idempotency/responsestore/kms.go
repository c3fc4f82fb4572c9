package responsestore

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// KMSClient is the part of the AWS KMS API the store uses ([WithKMS]), with
// the SDK's own method signatures: *kms.Client satisfies it.
type KMSClient interface {
	GenerateDataKey(ctx context.Context, params *kms.GenerateDataKeyInput, optFns ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error)
	Decrypt(ctx context.Context, params *kms.DecryptInput, optFns ...func(*kms.Options)) (*kms.DecryptOutput, error)
}

var _ KMSClient = (*kms.Client)(nil)

// EncryptionContextKey is the one key of the encryption context that
// every data key is made and decrypted with; its value is the function
// name ([WithFunctionName]). A key policy can require it
// (kms:EncryptionContext:idempotency-function), so that one function
// cannot decrypt another's responses.
const EncryptionContextKey = "idempotency-function"

// Data-key cache defaults ([WithDataKeyCache]): those of Powertools for AWS
// Lambda's data masking (max_cache_age_seconds, max_messages_encrypted,
// local_cache_capacity). 2^32 uses is also the bound NIST SP 800-38D sets
// for AES-GCM with random 96-bit nonces.
const (
	DefaultDataKeyMaxAge  = 5 * time.Minute
	DefaultDataKeyMaxUses = 1 << 32
	openedKeysMax         = 100
)

// kmsSealer encrypts with envelope encryption: each body with AES-256-GCM
// under a data key that KMS made (GenerateDataKey) and encrypted, which
// the envelope keeps; reading asks KMS to decrypt it.
//
// A data key seals bodies for at most maxAge and maxUses, then a new one
// is asked for; keys decrypted for reading are kept for maxAge, at most
// openedKeysMax of them. Nothing runs in the background: age is checked
// when a key is taken.
type kmsSealer struct {
	client  KMSClient
	keyID   string
	context map[string]string // the encryption context
	maxAge  time.Duration
	maxUses int64
	now     func() time.Time

	mu      sync.Mutex
	current *dataKey            // what seal uses, when still fresh
	opened  map[string]*dataKey // by the encrypted data key
}

// dataKey is a data key ready for use.
type dataKey struct {
	aead      cipher.AEAD
	encrypted []byte // as KMS returned it
	made      time.Time
	uses      int64
}

func newKMSSealer(client KMSClient, keyID, function string, maxAge time.Duration, maxUses int64) *kmsSealer {
	return &kmsSealer{
		client:  client,
		keyID:   keyID,
		context: map[string]string{EncryptionContextKey: function},
		maxAge:  maxAge,
		maxUses: maxUses,
		now:     time.Now,
		opened:  map[string]*dataKey{},
	}
}

func (*kmsSealer) flag() byte { return flagKMS }

func (k *kmsSealer) seal(ctx context.Context, plaintext, aad []byte) ([]byte, []byte, error) {
	key, err := k.sealingKey(ctx)
	if err != nil {
		return nil, nil, err
	}
	return key.encrypted, sealAEAD(key.aead, plaintext, aad), nil
}

// sealingKey returns the current data key, counting a use, or a new one.
// Two invocations that find no fresh key at once both ask KMS, and the
// later answer becomes the current key: holding the lock across the
// request would make every invocation wait on one.
func (k *kmsSealer) sealingKey(ctx context.Context) (*dataKey, error) {
	now := k.now()
	k.mu.Lock()
	if c := k.current; c != nil && c.uses < k.maxUses && now.Sub(c.made) < k.maxAge {
		c.uses++
		k.mu.Unlock()
		return c, nil
	}
	k.mu.Unlock()

	key, err := k.generate(ctx, now)
	if err != nil {
		return nil, err
	}
	key.uses = 1
	k.mu.Lock()
	k.current = key
	k.keep(key)
	k.mu.Unlock()
	return key, nil
}

// generate asks KMS for a new data key, made at now.
func (k *kmsSealer) generate(ctx context.Context, now time.Time) (*dataKey, error) {
	out, err := k.client.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{
		KeyId:             aws.String(k.keyID),
		KeySpec:           types.DataKeySpecAes256,
		EncryptionContext: k.context,
	})
	if err != nil {
		return nil, fmt.Errorf("kms GenerateDataKey: %w", err)
	}
	key, err := newDataKey(out.Plaintext, out.CiphertextBlob, now)
	if err != nil {
		return nil, fmt.Errorf("kms GenerateDataKey: %w", err)
	}
	return key, nil
}

// check asks KMS for a data key, as a response would, and keeps it as the
// current one, unused: the check costs no request that the first
// response, within the data key's age, would not have made.
func (k *kmsSealer) check(ctx context.Context) error {
	key, err := k.generate(ctx, k.now())
	if err != nil {
		return err
	}
	k.mu.Lock()
	k.current = key
	k.keep(key)
	k.mu.Unlock()
	return nil
}

func newDataKey(plain, encrypted []byte, made time.Time) (*dataKey, error) {
	if len(plain) != 32 {
		return nil, fmt.Errorf("data key of %d bytes, want 32 (AES-256)", len(plain))
	}
	block, err := aes.NewCipher(plain)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &dataKey{aead: aead, encrypted: encrypted, made: made}, nil
}

func (k *kmsSealer) open(ctx context.Context, encrypted, sealed, aad []byte) ([]byte, error) {
	key, err := k.openingKey(ctx, encrypted)
	if err != nil {
		return nil, err
	}
	return openAEAD(key.aead, sealed, aad)
}

// openingKey returns the data key that KMS encrypted as encrypted, from
// the cache or from KMS's Decrypt. Decrypt names the key ID, so that a
// ciphertext made under another KMS key is refused rather than decrypted
// with whatever key it names.
func (k *kmsSealer) openingKey(ctx context.Context, encrypted []byte) (*dataKey, error) {
	now := k.now()
	k.mu.Lock()
	key := k.opened[string(encrypted)]
	k.mu.Unlock()
	if key != nil && now.Sub(key.made) < k.maxAge {
		return key, nil
	}
	out, err := k.client.Decrypt(ctx, &kms.DecryptInput{
		CiphertextBlob:    encrypted,
		KeyId:             aws.String(k.keyID),
		EncryptionContext: k.context,
	})
	if err != nil {
		var invalid *types.InvalidCiphertextException
		var incorrect *types.IncorrectKeyException
		if errors.As(err, &invalid) || errors.As(err, &incorrect) {
			return nil, fmt.Errorf("%w: kms Decrypt of the data key: %w", errCannotDecrypt, err)
		}
		return nil, fmt.Errorf("kms Decrypt of the data key: %w", err)
	}
	if key, err = newDataKey(out.Plaintext, encrypted, now); err != nil {
		return nil, fmt.Errorf("%w: kms Decrypt: %w", errCannotDecrypt, err)
	}
	k.mu.Lock()
	k.keep(key)
	k.mu.Unlock()
	return key, nil
}

// keep adds key to the keys that open reuses, making room first: the
// expired keys go, and if none has, the oldest. k.mu must be held.
func (k *kmsSealer) keep(key *dataKey) {
	if len(k.opened) >= openedKeysMax {
		var oldest string
		for id, c := range k.opened {
			if key.made.Sub(c.made) >= k.maxAge {
				delete(k.opened, id)
			} else if oldest == "" || c.made.Before(k.opened[oldest].made) {
				oldest = id
			}
		}
		if len(k.opened) >= openedKeysMax {
			delete(k.opened, oldest)
		}
	}
	k.opened[string(key.encrypted)] = key
}
