package responsestore_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// The fakes here stand in for S3 and KMS in the tests that run without
// servers; the server tests run the same paths on moto's S3 and KMS.

// memS3 is an S3Client that keeps objects in a map, counts requests, and
// fails the next ones when told.
type memS3 struct {
	mu      sync.Mutex
	objects map[string][]byte // "bucket/key"
	puts    int
	gets    int
	failPut error // returned by every PutObject while set
	failGet error
}

func newMemS3() *memS3 { return &memS3{objects: map[string][]byte{}} }

func (m *memS3) PutObject(ctx context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	body, err := io.ReadAll(in.Body)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.puts++
	if m.failPut != nil {
		return nil, m.failPut
	}
	m.objects[aws.ToString(in.Bucket)+"/"+aws.ToString(in.Key)] = body
	return &s3.PutObjectOutput{}, nil
}

func (m *memS3) GetObject(ctx context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gets++
	if m.failGet != nil {
		return nil, m.failGet
	}
	b, ok := m.objects[aws.ToString(in.Bucket)+"/"+aws.ToString(in.Key)]
	if !ok {
		return nil, &s3types.NoSuchKey{Message: aws.String("The specified key does not exist.")}
	}
	return &s3.GetObjectOutput{Body: io.NopCloser(bytes.NewReader(bytes.Clone(b)))}, nil
}

// keys returns the stored object names, sorted.
func (m *memS3) keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ks []string
	for k := range m.objects {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// only returns the one stored object, and its name.
func (m *memS3) only() (string, []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range m.objects {
		return k, v
	}
	return "", nil
}

func (m *memS3) set(name string, body []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if body == nil {
		delete(m.objects, name)
		return
	}
	m.objects[name] = body
}

func (m *memS3) counts() (puts, gets int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.puts, m.gets
}

// memKMS is a KMSClient for one key: it "encrypts" data keys with AES-GCM
// under a key of its own, with the key ID and the encryption context as
// additional data, as KMS binds them, and counts requests.
type memKMS struct {
	keyID  string
	master cipher.AEAD

	mu        sync.Mutex
	generated int
	decrypted int
	contexts  []map[string]string // of every request
	fail      error
}

func newMemKMS(keyID string) *memKMS {
	return &memKMS{keyID: keyID, master: newGCM(randomKey())}
}

func randomKey() []byte {
	k := make([]byte, 32)
	rand.Read(k)
	return k
}

func newGCM(key []byte) cipher.AEAD {
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return gcm
}

func contextAAD(keyID string, ec map[string]string) []byte {
	var parts []string
	for k, v := range ec {
		parts = append(parts, k+"\x00"+v)
	}
	sort.Strings(parts)
	return []byte(keyID + "\x01" + strings.Join(parts, "\x01"))
}

func (m *memKMS) GenerateDataKey(ctx context.Context, in *kms.GenerateDataKeyInput, _ ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.generated++
	m.contexts = append(m.contexts, in.EncryptionContext)
	if m.fail != nil {
		return nil, m.fail
	}
	if aws.ToString(in.KeyId) != m.keyID {
		return nil, &kmstypes.NotFoundException{Message: aws.String("no such key")}
	}
	plain := randomKey()
	nonce := make([]byte, m.master.NonceSize())
	rand.Read(nonce)
	blob := m.master.Seal(nonce, nonce, plain, contextAAD(m.keyID, in.EncryptionContext))
	return &kms.GenerateDataKeyOutput{Plaintext: plain, CiphertextBlob: blob, KeyId: in.KeyId}, nil
}

func (m *memKMS) Decrypt(ctx context.Context, in *kms.DecryptInput, _ ...func(*kms.Options)) (*kms.DecryptOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.decrypted++
	m.contexts = append(m.contexts, in.EncryptionContext)
	if m.fail != nil {
		return nil, m.fail
	}
	if aws.ToString(in.KeyId) != m.keyID {
		return nil, &kmstypes.IncorrectKeyException{Message: aws.String("the specified KMS key cannot decrypt the data")}
	}
	n := m.master.NonceSize()
	blob := in.CiphertextBlob
	if len(blob) < n {
		return nil, &kmstypes.InvalidCiphertextException{}
	}
	plain, err := m.master.Open(nil, blob[:n], blob[n:], contextAAD(m.keyID, in.EncryptionContext))
	if err != nil {
		return nil, &kmstypes.InvalidCiphertextException{Message: aws.String(err.Error())}
	}
	return &kms.DecryptOutput{Plaintext: plain, KeyId: in.KeyId}, nil
}

func (m *memKMS) counts() (generated, decrypted int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.generated, m.decrypted
}

func (m *memKMS) setFail(err error) {
	m.mu.Lock()
	m.fail = err
	m.mu.Unlock()
}

var errUnavailable = errors.New("service unavailable (test)")
