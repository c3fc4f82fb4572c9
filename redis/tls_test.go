package redis

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"testing"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
	"github.com/redis/go-redis/v9"
)

// The Redis that scripts/with-servers.sh starts as ElastiCache runs with
// in-transit encryption and an AUTH token: TLS only, with a certificate
// from a CA made for the run, and a password.
const (
	tlsAddrEnv     = "TEST_REDIS_TLS_ADDR"
	tlsCAEnv       = "TEST_REDIS_TLS_CA"
	tlsPasswordEnv = "TEST_REDIS_TLS_PASSWORD"
)

// TestTLSAndAuth: TLS and AUTH are the client's options, which the store
// does not see. The conformance suite passes over TLS with the password,
// REDIS_URL's rediss:// form reaches the same server, and a client
// without TLS or with a wrong password gets nowhere.
func TestTLSAndAuth(t *testing.T) {
	addr, ca, password := os.Getenv(tlsAddrEnv), os.Getenv(tlsCAEnv), os.Getenv(tlsPasswordEnv)
	if addr == "" || ca == "" || password == "" {
		testenv.Unavailable(t, "%s, %s or %s is not set: no Redis with TLS (scripts/with-servers.sh starts one with redis-server and openssl)", tlsAddrEnv, tlsCAEnv, tlsPasswordEnv)
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("no certificate in %s", ca)
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots}

	t.Run("client options", func(t *testing.T) {
		c := redis.NewClient(&redis.Options{Addr: addr, Password: password, TLSConfig: tlsConfig})
		defer c.Close()
		s := newStore(t, c)
		idempotencytest.TestStore(t, func(*testing.T) idempotency.Store { return s })
	})

	t.Run("REDIS_URL", func(t *testing.T) {
		// The CA is the run's own, not a public one as ElastiCache's:
		// the URL cannot name it, so this client does not verify it.
		t.Setenv(URLEnv, "rediss://:"+password+"@"+addr+"?skip_verify=true")
		c, err := ClientFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := newStore(t, c).Get(t.Context(), "k"); !errors.Is(err, idempotency.ErrRecordNotFound) {
			t.Errorf("Get over rediss://: %v, want ErrRecordNotFound", err)
		}
	})

	t.Run("refused", func(t *testing.T) {
		for name, opt := range map[string]*redis.Options{
			"no TLS":         {Addr: addr, Password: password, MaxRetries: -1},
			"wrong password": {Addr: addr, Password: "wrong", TLSConfig: tlsConfig, MaxRetries: -1},
			"unknown CA":     {Addr: addr, Password: password, TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12}, MaxRetries: -1},
		} {
			// New sends nothing: the refusal comes at the first request.
			c := redis.NewClient(opt)
			s, err := New(c)
			if err != nil {
				t.Fatalf("%s: New: %v", name, err)
			}
			if _, err = s.Get(t.Context(), "k"); err == nil || errors.Is(err, idempotency.ErrRecordNotFound) {
				t.Errorf("%s: Get = %v, want the connection refused", name, err)
			}
			c.Close()
		}
	})

	// Credentials that the server refuses are a *ConfigError on the first
	// invocation, before any record is written: a retry cannot help.
	t.Run("credentials", func(t *testing.T) {
		for name, pw := range map[string]string{"wrong password": "wrong", "no password": ""} {
			c := redis.NewClient(&redis.Options{Addr: addr, Password: pw, TLSConfig: tlsConfig, MaxRetries: -1})
			s, err := New(c, func(o *Options) { o.KeyPrefix = testPrefix(t) })
			if err != nil {
				t.Fatalf("%s: New: %v", name, err)
			}
			errs := firstInvocations(t, s, 1)
			if ce, ok := errs[0].(*idempotency.ConfigError); !ok || ce.Name != "redis.New client" {
				t.Errorf("%s: the first invocation: %v, want a *ConfigError for redis.New client", name, errs[0])
			}
			c.Close()
		}
		admin := redis.NewClient(&redis.Options{Addr: addr, Password: password, TLSConfig: tlsConfig})
		defer admin.Close()
		noKeys(t, admin, "test:"+t.Name())
	})
}
