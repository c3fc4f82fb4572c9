package responsestore_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
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

// firstInvocation builds a handler on store, invokes it once, and
// returns its error; it fails the test if the handler ran while the store
// refused.
func firstInvocation(t *testing.T, store idempotency.Store) error {
	t.Helper()
	ran := false
	h, err := idempotency.New(store, func(context.Context, struct{ ID string }) (string, error) {
		ran = true
		return "done", nil
	}, idempotency.WithEventKey("ID"), idempotency.WithKeyPrefix("fn"), idempotency.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.Invoke(t.Context(), []byte(`{"ID":"1"}`))
	if _, refused := err.(*idempotency.ConfigError); refused && ran {
		t.Error("the handler ran on a store that refused")
	}
	return err
}

// wantConfigError fails the test unless err is a *ConfigError for name,
// itself and not wrapped in another error.
func wantConfigError(t *testing.T, err error, name string) {
	t.Helper()
	if ce, ok := err.(*idempotency.ConfigError); !ok || ce.Name != name {
		t.Fatalf("%v (%T), want a *ConfigError for %s", err, err, name)
	}
}

// TestCheckAtFirstInvocation: New sends nothing; the first invocation
// asks KMS for a data key and S3 for an object that does not exist, once
// each, before any record is written, and what they refuse for good is a
// *ConfigError naming the option. What they may answer otherwise next
// time (unreachable, throttled) fails the invocation with their error,
// not a *ConfigError. Either way the next invocation asks again; once the
// check has passed, none does.
func TestCheckAtFirstInvocation(t *testing.T) {
	t.Parallel()
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
			t.Parallel()
			k := newMemKMS("key-1")
			k.setFail(c.fail)
			inner := idempotencytest.NewStore()
			store := mustNew(t, inner, responsestore.WithKMS(k, c.keyID), responsestore.WithFunctionName("fn"))
			if g, d := k.counts(); g != 0 || d != 0 {
				t.Errorf("New sent %d GenerateDataKey and %d Decrypt, want none", g, d)
			}
			err := firstInvocation(t, store)
			switch {
			case c.config:
				wantConfigError(t, err, "responsestore.WithKMS")
			case c.fail == nil && err != nil:
				t.Fatalf("the first invocation: %v", err)
			case c.fail != nil:
				if _, ok := errors.AsType[*idempotency.ConfigError](err); ok || !errors.Is(err, c.fail) {
					t.Fatalf("the first invocation: %v, want its error, not a *ConfigError", err)
				}
			}
			// The check's data key seals the first response.
			if g, d := k.counts(); g != 1 || d != 0 {
				t.Errorf("the first invocation sent %d GenerateDataKey and %d Decrypt, want 1 and 0", g, d)
			}
			if recs := inner.Records(); err != nil && len(recs) > 0 {
				t.Errorf("a refused invocation wrote %+v", recs)
			}
			firstInvocation(t, store)
			wantAgain := 1 // the second response uses the first's data key
			if err != nil {
				wantAgain = 2 // asked again
			}
			if g, _ := k.counts(); g != wantAgain {
				t.Errorf("two invocations sent %d GenerateDataKey, want %d", g, wantAgain)
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
			t.Parallel()
			s3 := newMemS3()
			s3.failGet = c.fail
			if c.object {
				s3.set("b/idempotency/responsestore-check", []byte("x"))
			}
			inner := idempotencytest.NewStore()
			store := mustNew(t, inner, responsestore.WithS3(s3, "b"))
			if p, g := s3.counts(); p != 0 || g != 0 {
				t.Errorf("New sent %d PutObject and %d GetObject, want none", p, g)
			}
			err := firstInvocation(t, store)
			switch {
			case c.config:
				wantConfigError(t, err, "responsestore.WithS3")
			case c.fail == nil && err != nil:
				t.Fatalf("the first invocation: %v", err)
			case c.fail != nil:
				if _, ok := errors.AsType[*idempotency.ConfigError](err); ok || !errors.Is(err, c.fail) {
					t.Fatalf("the first invocation: %v, want its error, not a *ConfigError", err)
				}
			}
			if p, g := s3.counts(); p != 0 || g != 1 {
				t.Errorf("the first invocation sent %d PutObject and %d GetObject, want 0 and 1", p, g)
			}
			if recs := inner.Records(); err != nil && len(recs) > 0 {
				t.Errorf("a refused invocation wrote %+v", recs)
			}
		})
	}

	t.Run("aead-and-gzip-send-nothing", func(t *testing.T) {
		t.Parallel()
		store := mustNew(t, idempotencytest.NewStore(), responsestore.WithAEAD(newGCM(randomKey())),
			responsestore.WithFunctionName("fn"), responsestore.WithCompression(0))
		if err := firstInvocation(t, store); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCheckOnMoto: the case from the field, a KMS key the function may not
// use, found by the first invocation with a *ConfigError, before any
// record is written, instead of by each response (not stored, and its
// duplicates told it was too large). moto refuses a key, or an alias,
// that does not exist, and a bucket that does not exist; it lets a
// disabled key make data keys, as the last case shows, so the refusals of
// a disabled key or of a key policy are checked on fakes that answer as
// KMS does.
func TestCheckOnMoto(t *testing.T) {
	t.Parallel()
	m := newMoto(t)
	fn := responsestore.WithFunctionName("orders")

	var uuid [16]byte
	rand.Read(uuid[:])
	missingKey := fmt.Sprintf("%x-%x-%x-%x-%x", uuid[0:4], uuid[4:6], uuid[6:8], uuid[8:10], uuid[10:])
	for _, c := range []struct {
		name   string
		opts   []responsestore.Option
		option string
	}{
		{"missing alias", []responsestore.Option{responsestore.WithKMS(m.kms, "alias/"+t.Name()+"-missing"), fn}, "responsestore.WithKMS"},
		{"missing key", []responsestore.Option{responsestore.WithKMS(m.kms, missingKey), fn}, "responsestore.WithKMS"},
		{"missing bucket", []responsestore.Option{responsestore.WithS3(m.s3, m.bucket+"-missing")}, "responsestore.WithS3"},
	} {
		err := firstInvocation(t, mustNew(t, m.dynamoStore(t, nil), c.opts...))
		wantConfigError(t, err, c.option)
		t.Logf("%s: %v", c.name, err)
	}
	if n := m.items(t); n != 0 {
		t.Errorf("the refused stores wrote %d items, want none", n)
	}

	store := mustNew(t, m.dynamoStore(t, nil), responsestore.WithKMS(m.kms, m.keyID), fn, responsestore.WithS3(m.s3, m.bucket))
	m.kmsn.take()
	m.s3n.take()
	start := time.Now()
	if err := firstInvocation(t, store); err != nil {
		t.Fatal(err)
	}
	t.Logf("the first invocation, both checks included, took %v on moto", time.Since(start))
	if got, want := m.kmsn.take(), map[string]int{"GenerateDataKey": 1}; !maps.Equal(got, want) {
		t.Errorf("the first invocation sent KMS %v, want %v", got, want)
	}
	if got, want := m.s3n.take(), map[string]int{"GetObject": 1}; !maps.Equal(got, want) {
		t.Errorf("the first invocation sent S3 %v, want %v", got, want)
	}
	if n := m.items(t); n != 1 {
		t.Errorf("the table holds %d items, want the first invocation's", n)
	}

	if _, err := m.kms.DisableKey(t.Context(), &kms.DisableKeyInput{KeyId: aws.String(m.keyID)}); err != nil {
		t.Fatal(err)
	}
	if err := firstInvocation(t, mustNew(t, idempotencytest.NewStore(), responsestore.WithKMS(m.kms, m.keyID), fn)); err != nil {
		t.Errorf("moto now refuses a disabled key (%v): move the disabled case here from TestCheckAtFirstInvocation", err)
	}
}
