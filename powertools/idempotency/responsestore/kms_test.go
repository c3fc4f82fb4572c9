package responsestore

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
)

// keyServer is a KMSClient that hands out numbered data keys and
// remembers them, and checks what it is asked.
type keyServer struct {
	t    *testing.T
	mu   sync.Mutex
	keys map[string][]byte // encrypted -> plaintext
	made int
	dec  int
}

func (k *keyServer) check(keyID *string, ec map[string]string) {
	if aws.ToString(keyID) != "alias/test" || !maps.Equal(ec, map[string]string{EncryptionContextKey: "fn"}) {
		k.t.Errorf("request for key %q with context %v", aws.ToString(keyID), ec)
	}
}

func (k *keyServer) GenerateDataKey(_ context.Context, in *kms.GenerateDataKeyInput, _ ...func(*kms.Options)) (*kms.GenerateDataKeyOutput, error) {
	k.check(in.KeyId, in.EncryptionContext)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.made++
	plain := make([]byte, 32)
	rand.Read(plain)
	blob := fmt.Appendf(nil, "key-%d", k.made)
	k.keys[string(blob)] = plain
	return &kms.GenerateDataKeyOutput{Plaintext: plain, CiphertextBlob: blob}, nil
}

func (k *keyServer) Decrypt(_ context.Context, in *kms.DecryptInput, _ ...func(*kms.Options)) (*kms.DecryptOutput, error) {
	k.check(in.KeyId, in.EncryptionContext)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dec++
	return &kms.DecryptOutput{Plaintext: k.keys[string(in.CiphertextBlob)]}, nil
}

func (k *keyServer) counts() (made, decrypted int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.made, k.dec
}

// testSealer returns a sealer on a new key server, with a clock the test
// moves.
func testSealer(t *testing.T, maxAge time.Duration, maxUses int64) (*kmsSealer, *keyServer, *time.Time) {
	srv := &keyServer{t: t, keys: map[string][]byte{}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k := newKMSSealer(srv, "alias/test", "fn", maxAge, maxUses)
	k.now = func() time.Time { return now }
	return k, srv, &now
}

func sealOpen(t *testing.T, k *kmsSealer, plain string) {
	t.Helper()
	dataKey, sealed, err := k.seal(t.Context(), []byte(plain), []byte("aad"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := k.open(t.Context(), dataKey, sealed, []byte("aad"))
	if err != nil || string(got) != plain {
		t.Fatalf("open = %q, %v; want %q", got, err, plain)
	}
}

func TestDataKeyUses(t *testing.T) {
	t.Parallel()
	k, srv, _ := testSealer(t, time.Hour, 3)
	for i := range 7 {
		sealOpen(t, k, fmt.Sprint(i))
	}
	// Uses 1-3, 4-6, 7: three keys; each opened from the cache.
	if made, dec := srv.counts(); made != 3 || dec != 0 {
		t.Fatalf("GenerateDataKey %d times, Decrypt %d; want 3 and 0", made, dec)
	}
}

func TestDataKeyAge(t *testing.T) {
	t.Parallel()
	k, srv, now := testSealer(t, time.Minute, 1000)
	sealOpen(t, k, "a")
	*now = now.Add(time.Minute - time.Nanosecond)
	sealOpen(t, k, "b")
	if made, _ := srv.counts(); made != 1 {
		t.Fatalf("GenerateDataKey %d times within the age, want 1", made)
	}
	*now = now.Add(time.Nanosecond)
	sealOpen(t, k, "c")
	if made, _ := srv.counts(); made != 2 {
		t.Fatalf("GenerateDataKey %d times, want 2: the key reached its age", made)
	}
}

// Keys decrypted for reading are kept for maxAge, at most openedKeysMax of
// them.
func TestOpenedKeys(t *testing.T) {
	t.Parallel()
	writer, srv, now := testSealer(t, time.Hour, 1)
	type sealedBody struct{ dataKey, sealed []byte }
	var bodies []sealedBody
	for i := range openedKeysMax + 50 {
		dataKey, sealed, err := writer.seal(t.Context(), fmt.Append(nil, i), nil)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, sealedBody{dataKey, sealed})
	}
	reader := newKMSSealer(srv, "alias/test", "fn", time.Hour, 1)
	reader.now = writer.now
	open := func(b sealedBody) {
		if _, err := reader.open(t.Context(), b.dataKey, b.sealed, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range bodies {
		open(b)
	}
	if n := len(reader.opened); n != openedKeysMax {
		t.Fatalf("%d keys kept, want %d", n, openedKeysMax)
	}
	_, dec := srv.counts()
	open(bodies[len(bodies)-1]) // the newest is kept
	if _, again := srv.counts(); again != dec {
		t.Fatal("a kept key was decrypted again")
	}
	*now = now.Add(time.Hour)
	open(bodies[len(bodies)-1]) // now too old
	if _, again := srv.counts(); again != dec+1 {
		t.Fatal("a key older than maxAge was not decrypted again")
	}
}

// Concurrent invocations share the data key; run with -race.
func TestDataKeyConcurrent(t *testing.T) {
	t.Parallel()
	k, srv, _ := testSealer(t, time.Hour, 50)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				sealOpen(t, k, fmt.Sprintf("%d-%d", g, i))
			}
		})
	}
	wg.Wait()
	// 800 seals, 50 per key: 16 keys, and at each change of key at most
	// one more per goroutine that found the key used up while another was
	// asking for the next: never one per seal.
	if made, _ := srv.counts(); made < 16 || made > 16*8 {
		t.Fatalf("GenerateDataKey %d times, want 16 to 128", made)
	}
}
