package redis

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

func configError(t *testing.T, err error, name string) {
	t.Helper()
	ce, ok := errors.AsType[*idempotency.ConfigError](err)
	if !ok || ce.Name != name {
		t.Errorf("error = %v, want a *ConfigError for %s", err, name)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	live := servers[0].client(t)
	s, err := New(live)
	if err != nil {
		t.Fatal(err)
	}
	if s.opts.KeyPrefix != "idempotency:" || s.opts.MaxRecordSize != DefaultMaxRecordSize || s.opts.ScanCount != 100 {
		t.Errorf("defaults = %+v", s.opts)
	}
	if s, err := New(live, func(o *Options) { o.KeyPrefix = "" }); err != nil || s.opts.KeyPrefix != "" {
		t.Errorf("an empty prefix: %+v, %v; want it kept", s, err)
	}
	// A bad option is refused before any command: this client is never
	// dialled.
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	_, err = New(nil)
	configError(t, err, "redis.New client")
	for _, n := range []int{0, -1} {
		_, err := New(client, func(o *Options) { o.MaxRecordSize = n })
		configError(t, err, "redis.Options.MaxRecordSize")
		_, err = New(client, func(o *Options) { o.ScanCount = n })
		configError(t, err, "redis.Options.ScanCount")
	}
}

func TestClientFromEnv(t *testing.T) {
	t.Setenv(URLEnv, "rediss://app:s3cret@primary.example:6380/2?max_retries=5")
	c, err := ClientFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := c.Options()
	if o.Addr != "primary.example:6380" || o.Username != "app" || o.Password != "s3cret" || o.DB != 2 || o.TLSConfig == nil || o.MaxRetries != 5 || !o.ContextTimeoutEnabled {
		t.Errorf("options = addr %q user %q db %d tls %v retries %d context timeout %v", o.Addr, o.Username, o.DB, o.TLSConfig != nil, o.MaxRetries, o.ContextTimeoutEnabled)
	}

	t.Setenv(URLEnv, "rediss://app:s3cret@cluster.example:6379?addr=node2.example:6379")
	cc, err := ClusterClientFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if co := cc.Options(); !slices.Equal(co.Addrs, []string{"cluster.example:6379", "node2.example:6379"}) || co.TLSConfig == nil || co.Password != "s3cret" || !co.ContextTimeoutEnabled {
		t.Errorf("cluster options = addrs %v tls %v context timeout %v", co.Addrs, co.TLSConfig != nil, co.ContextTimeoutEnabled)
	}

	for _, bad := range []string{"", "http://primary.example", "redis://app:s3cret@primary.example:port", "redis://app:s3cret@primary.example/2?no_such_option=1"} {
		t.Setenv(URLEnv, bad)
		_, err := ClientFromEnv()
		configError(t, err, URLEnv)
		_, cerr := ClusterClientFromEnv()
		configError(t, cerr, URLEnv)
		for _, err := range []error{err, cerr} {
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error for %q shows the password: %v", bad, err)
			}
		}
	}
}
