package responsestore_test

import (
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

// wantConfigError fails the test unless err is a *ConfigError for name.
func wantConfigError(t *testing.T, err error, name string) {
	t.Helper()
	if ce, ok := errors.AsType[*idempotency.ConfigError](err); !ok || ce.Name != name {
		t.Fatalf("New: %v, want a *ConfigError for %s", err, name)
	}
}

// TestCheckAtNew: New asks KMS for a data key and S3 for an object that
// does not exist, once each, and refuses what they refuse for good with a
// *ConfigError naming the option. What they may answer otherwise next time
// (unreachable, throttled) is New's error, not a *ConfigError.
func TestCheckAtNew(t *testing.T) {
	refused := func(code string) error { return &smithy.GenericAPIError{Code: code, Message: "refused (test)"} }
	kmsCases := []struct {
		name   string
		keyID  string // the key New is given; memKMS knows key-1
		fail   error
		config bool // want a *ConfigError
	}{
		{"usable", "key-1", nil, false},
		{"missing", "alias/no-such-key", nil, true},
		{"disabled", "key-1", &kmstypes.DisabledException{Message: aws.String("disabled")}, true},
		{"pending-deletion", "key-1", &kmstypes.KMSInvalidStateException{Message: aws.String("pending deletion")}, true},
		{"not-for-encryption", "key-1", &kmstypes.InvalidKeyUsageException{Message: aws.String("SIGN_VERIFY")}, true},
		{"not-allowed", "key-1", refused("AccessDeniedException"), true},
		{"unreachable", "key-1", errUnavailable, false},
		{"throttled", "key-1", refused("ThrottlingException"), false},
	}
	for _, c := range kmsCases {
		t.Run("kms/"+c.name, func(t *testing.T) {
			k := newMemKMS("key-1")
			k.setFail(c.fail)
			_, err := responsestore.New(idempotencytest.NewStore(), responsestore.WithKMS(k, c.keyID), responsestore.WithFunctionName("fn"))
			switch {
			case c.config:
				wantConfigError(t, err, "responsestore.WithKMS")
			case c.fail == nil && err != nil:
				t.Fatalf("New: %v", err)
			case c.fail != nil:
				if _, ok := errors.AsType[*idempotency.ConfigError](err); ok || !errors.Is(err, c.fail) {
					t.Fatalf("New: %v, want its error, not a *ConfigError", err)
				}
			}
			if g, d := k.counts(); g != 1 || d != 0 {
				t.Errorf("New sent %d GenerateDataKey and %d Decrypt, want 1 and 0", g, d)
			}
		})
	}

	s3Cases := []struct {
		name   string
		fail   error
		object bool // the checked object exists
		config bool
	}{
		{"usable", nil, false, false},
		{"object-exists", nil, true, false},
		{"missing-bucket", &s3types.NoSuchBucket{Message: aws.String("no such bucket")}, false, true},
		{"not-allowed", refused("AccessDenied"), false, true},
		{"other-region", refused("PermanentRedirect"), false, true},
		{"unreachable", errUnavailable, false, false},
	}
	for _, c := range s3Cases {
		t.Run("s3/"+c.name, func(t *testing.T) {
			s3 := newMemS3()
			s3.failGet = c.fail
			if c.object {
				s3.set("b/idempotency/responsestore-check", []byte("x"))
			}
			_, err := responsestore.New(idempotencytest.NewStore(), responsestore.WithS3(s3, "b"))
			switch {
			case c.config:
				wantConfigError(t, err, "responsestore.WithS3")
			case c.fail == nil && err != nil:
				t.Fatalf("New: %v", err)
			case c.fail != nil:
				if _, ok := errors.AsType[*idempotency.ConfigError](err); ok || !errors.Is(err, c.fail) {
					t.Fatalf("New: %v, want its error, not a *ConfigError", err)
				}
			}
			if p, g := s3.counts(); p != 0 || g != 1 {
				t.Errorf("New sent %d PutObject and %d GetObject, want 0 and 1", p, g)
			}
		})
	}

	t.Run("aead-and-gzip-send-nothing", func(t *testing.T) {
		if _, err := responsestore.New(idempotencytest.NewStore(), responsestore.WithAEAD(newGCM(randomKey())),
			responsestore.WithFunctionName("fn"), responsestore.WithCompression(0)); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCheckOnMoto: the case from the field, a KMS key the function may not
// use, found by New with a *ConfigError instead of by each response (not
// stored, and its duplicates told it was too large). moto refuses a key,
// or an alias, that does not exist, and a bucket that does not exist; it
// lets a disabled key make data keys, as the last case shows, so the
// refusals of a disabled key or of a key policy are checked on fakes
// that answer as KMS does.
func TestCheckOnMoto(t *testing.T) {
	m := newMoto(t)
	inner := idempotencytest.NewStore()
	fn := responsestore.WithFunctionName("orders")

	start := time.Now()
	if _, err := responsestore.New(inner, responsestore.WithKMS(m.kms, m.keyID), fn, responsestore.WithS3(m.s3, m.bucket)); err != nil {
		t.Fatal(err)
	}
	t.Logf("New with both checks took %v on moto", time.Since(start))
	if got, want := m.kmsn.take(), map[string]int{"GenerateDataKey": 1}; !maps.Equal(got, want) {
		t.Errorf("New sent KMS %v, want %v", got, want)
	}
	if got, want := m.s3n.take(), map[string]int{"GetObject": 1}; !maps.Equal(got, want) {
		t.Errorf("New sent S3 %v, want %v", got, want)
	}

	var uuid [16]byte
	rand.Read(uuid[:])
	missingKey := fmt.Sprintf("%x-%x-%x-%x-%x", uuid[0:4], uuid[4:6], uuid[6:8], uuid[8:10], uuid[10:])
	for _, keyID := range []string{"alias/" + t.Name() + "-missing", missingKey} {
		_, err := responsestore.New(inner, responsestore.WithKMS(m.kms, keyID), fn)
		wantConfigError(t, err, "responsestore.WithKMS")
		t.Logf("key %s: %v", keyID, err)
	}
	_, err := responsestore.New(inner, responsestore.WithS3(m.s3, m.bucket+"-missing"))
	wantConfigError(t, err, "responsestore.WithS3")
	t.Logf("bucket: %v", err)

	if _, err := m.kms.DisableKey(t.Context(), &kms.DisableKeyInput{KeyId: aws.String(m.keyID)}); err != nil {
		t.Fatal(err)
	}
	if _, err := responsestore.New(inner, responsestore.WithKMS(m.kms, m.keyID), fn); err != nil {
		t.Errorf("moto now refuses a disabled key (%v): move the disabled case here from TestCheckAtNew", err)
	}
}
