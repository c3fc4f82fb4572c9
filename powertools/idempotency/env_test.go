package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

var envVars = []string{
	"POWERTOOLS_IDEMPOTENCY_DISABLED",
	"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH",
	"POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH",
	"POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER",
	"POWERTOOLS_IDEMPOTENCY_KEY_PREFIX",
	"AWS_LAMBDA_FUNCTION_NAME",
}

// setEnv clears every variable the package reads, then sets env.
func setEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, v := range envVars {
		t.Setenv(v, env[v])
	}
}

func TestConfigErrors(t *testing.T) {
	store := idempotencytest.NewStore()
	tests := []struct {
		name     string
		env      map[string]string
		opts     []idempotency.Option
		nilStore bool
		wantName string
	}{
		{"bad DISABLED", map[string]string{"POWERTOOLS_IDEMPOTENCY_DISABLED": "maybe"}, nil, false, "POWERTOOLS_IDEMPOTENCY_DISABLED"},
		{"bad EXPIRES_AFTER", map[string]string{"POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER": "3600"}, nil, false, "POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER"},
		{"EXPIRES_AFTER under a second", map[string]string{"POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER": "500ms"}, nil, false, "POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER"},
		{"bad EVENT_KEY_JMESPATH", map[string]string{"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH": "order["}, nil, false, "POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH"},
		{"bad PAYLOAD_VALIDATION_JMESPATH", map[string]string{"POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH": "amount["}, nil, false, "POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH"},
		{"no prefix anywhere", nil, nil, false, "WithKeyPrefix"},
		{"empty WithKeyPrefix", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn"}, []idempotency.Option{idempotency.WithKeyPrefix("")}, false, "WithKeyPrefix"},
		{"bad WithEventKey", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn"}, []idempotency.Option{idempotency.WithEventKey("order[")}, false, "WithEventKey"},
		{"bad WithPayloadValidation", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn"}, []idempotency.Option{idempotency.WithPayloadValidation("a[")}, false, "WithPayloadValidation"},
		{"WithExpiresAfter zero", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn"}, []idempotency.Option{idempotency.WithExpiresAfter(0)}, false, "WithExpiresAfter"},
		{"WithLease negative", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn"}, []idempotency.Option{idempotency.WithLease(-time.Second)}, false, "WithLease"},
		{"WithLocalCache negative", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn"}, []idempotency.Option{idempotency.WithLocalCache(-1)}, false, "WithLocalCache"},
		{"nil store", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn"}, nil, true, "store"},
		// Read only when idempotency is off: then it decides a warning.
		{"bad POWERTOOLS_DEV, disabled", nil, []idempotency.Option{idempotency.WithEnvironment(map[string]string{"POWERTOOLS_IDEMPOTENCY_DISABLED": "true", "POWERTOOLS_DEV": "banana"})}, false, "POWERTOOLS_DEV"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			setEnv(t, tc.env)
			s := idempotency.Store(store)
			if tc.nilStore {
				s = nil
			}
			_, err := idempotency.New(s, (&echo{}).handle, tc.opts...)
			var ce *idempotency.ConfigError
			if !errors.As(err, &ce) || !errors.As(err, new(*idempotency.ConfigError)) {
				t.Fatalf("err = %v, want a *ConfigError", err)
			}
			if ce.Name != tc.wantName {
				t.Errorf("ConfigError names %q, want %q", ce.Name, tc.wantName)
			}
			defer func() {
				if p, ok := recover().(*idempotency.ConfigError); !ok || p.Name != tc.wantName {
					t.Errorf("Wrap panicked with %v, want the *ConfigError", p)
				}
			}()
			idempotency.Wrap(s, (&echo{}).handle, tc.opts...)
		})
	}
}

func TestCodeOptionsWinOverEnvironment(t *testing.T) {
	t.Run("a bad variable overridden in code is not read", func(t *testing.T) {
		setEnv(t, map[string]string{
			"AWS_LAMBDA_FUNCTION_NAME":                  "fn",
			"POWERTOOLS_IDEMPOTENCY_DISABLED":           "maybe",
			"POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER":      "soon",
			"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH": "order[",
		})
		_, err := idempotency.New(idempotencytest.NewStore(), (&echo{}).handle,
			idempotency.WithDisabled(false), idempotency.WithExpiresAfter(time.Hour), idempotency.WithEventKey("id"))
		if err != nil {
			t.Fatal(err)
		}
	})

	keyPrefixes := []struct {
		name string
		env  map[string]string
		opts []idempotency.Option
		want string
	}{
		{"function name", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn"}, nil, "fn#"},
		{"KEY_PREFIX over function name", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn", "POWERTOOLS_IDEMPOTENCY_KEY_PREFIX": "env"}, nil, "env#"},
		{"WithKeyPrefix over both", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn", "POWERTOOLS_IDEMPOTENCY_KEY_PREFIX": "env"}, []idempotency.Option{idempotency.WithKeyPrefix("code")}, "code#"},
		// A default gives way to the environment, the function's name
		// included: the key is the one its template describes.
		{"function name over WithDefaults", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn"}, []idempotency.Option{idempotency.WithDefaults(idempotency.WithKeyPrefix("code"))}, "fn#"},
		{"WithDefaults without a function name", nil, []idempotency.Option{idempotency.WithDefaults(idempotency.WithKeyPrefix("code"))}, "code#"},
		{"Python's prefix over WithDefaults", nil, []idempotency.Option{idempotency.WithDefaults(idempotency.WithKeyPrefix("code")),
			idempotency.WithEnvironment(map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn", "POWERTOOLS_IDEMPOTENCY_COMPATIBILITY": "python", "POWERTOOLS_IDEMPOTENCY_PYTHON_HANDLER": "app.handler"})}, "fn.app.handler#"},
		{"WithDefaults, Python without a handler", nil, []idempotency.Option{idempotency.WithDefaults(idempotency.WithKeyPrefix("code")),
			idempotency.WithEnvironment(map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn", "POWERTOOLS_IDEMPOTENCY_COMPATIBILITY": "python"})}, "code#"},
	}
	for _, tc := range keyPrefixes {
		t.Run("prefix: "+tc.name, func(t *testing.T) {
			setEnv(t, tc.env)
			store := idempotencytest.NewStore()
			h := idempotency.Wrap(store, (&echo{}).handle, tc.opts...)
			if _, err := h.Invoke(context.Background(), []byte(`{"id":1}`)); err != nil {
				t.Fatal(err)
			}
			if k := store.Records()[0].Key; k[:len(tc.want)] != tc.want {
				t.Errorf("key %s, want prefix %s", k, tc.want)
			}
		})
	}

	t.Run("event key", func(t *testing.T) {
		setEnv(t, map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn", "POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH": "id"})
		for _, tc := range []struct {
			opts  []idempotency.Option
			calls int
		}{
			{nil, 1}, // keyed on id: the second event is a duplicate
			{[]idempotency.Option{idempotency.WithEventKey("other")}, 2},
		} {
			var e echo
			h := idempotency.Wrap(idempotencytest.NewStore(), e.handle, tc.opts...)
			for _, ev := range []string{`{"id":1,"other":1}`, `{"id":1,"other":2}`} {
				if _, err := h.Invoke(context.Background(), []byte(ev)); err != nil {
					t.Fatal(err)
				}
			}
			if e.calls != tc.calls {
				t.Errorf("with %d options: handler ran %d times, want %d", len(tc.opts), e.calls, tc.calls)
			}
		}
	})

	t.Run("payload validation", func(t *testing.T) {
		setEnv(t, map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn", "POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH": "amount"})
		h := idempotency.Wrap(idempotencytest.NewStore(), (&echo{}).handle, idempotency.WithEventKey("id"))
		h.Invoke(context.Background(), []byte(`{"id":1,"amount":1}`))
		if _, err := h.Invoke(context.Background(), []byte(`{"id":1,"amount":2}`)); !errors.As(err, new(*idempotency.PayloadConflictError)) {
			t.Errorf("err = %v, want a PayloadConflictError from the variable's expression", err)
		}
		h = idempotency.Wrap(idempotencytest.NewStore(), (&echo{}).handle, idempotency.WithEventKey("id"), idempotency.WithPayloadValidation(""))
		h.Invoke(context.Background(), []byte(`{"id":1,"amount":1}`))
		if _, err := h.Invoke(context.Background(), []byte(`{"id":1,"amount":2}`)); err != nil {
			t.Errorf("err = %v, want validation off", err)
		}
	})

	t.Run("expires after", func(t *testing.T) {
		setEnv(t, map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "fn", "POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER": "2h"})
		clock := newFakeClock()
		for _, tc := range []struct {
			opts []idempotency.Option
			want time.Duration
		}{
			{nil, 2 * time.Hour},
			{[]idempotency.Option{idempotency.WithExpiresAfter(30 * time.Minute)}, 30 * time.Minute},
		} {
			store := idempotencytest.NewStore()
			h := idempotency.Wrap(store, (&echo{}).handle, append(tc.opts, idempotency.WithClock(clock.Now))...)
			if _, err := h.Invoke(context.Background(), []byte(`{"id":1}`)); err != nil {
				t.Fatal(err)
			}
			if got := store.Records()[0].Expiry; !got.Equal(clock.Now().Add(tc.want)) {
				t.Errorf("expiry %v, want now + %v", got, tc.want)
			}
		}
	})

	t.Run("disabled", func(t *testing.T) {
		for _, v := range []string{"true", "1", "TRUE"} {
			setEnv(t, map[string]string{"POWERTOOLS_IDEMPOTENCY_DISABLED": v}) // and no prefix: fine when disabled
			store := idempotencytest.NewStore()
			var e echo
			h := idempotency.Wrap(store, e.handle)
			for range 2 {
				if _, err := h.Invoke(context.Background(), []byte(`{"id":1}`)); err != nil {
					t.Fatal(err)
				}
			}
			if e.calls != 2 || store.Counts() != (idempotencytest.Counts{}) {
				t.Errorf("DISABLED=%s: %d calls, store counts %+v; want 2 and none", v, e.calls, store.Counts())
			}
		}
		setEnv(t, map[string]string{"POWERTOOLS_IDEMPOTENCY_DISABLED": "1", "AWS_LAMBDA_FUNCTION_NAME": "fn"})
		store := idempotencytest.NewStore()
		h := idempotency.Wrap(store, (&echo{}).handle, idempotency.WithDisabled(false))
		h.Invoke(context.Background(), []byte(`{"id":1}`))
		if store.Counts().Acquire != 1 {
			t.Errorf("WithDisabled(false) did not win over the variable")
		}
	})
}

func TestFuncConfig(t *testing.T) {
	setEnv(t, map[string]string{"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH": "order["})
	double := func(_ context.Context, n int) (int, error) { return 2 * n, nil }
	store := idempotencytest.NewStore()
	if _, err := newFunc("double", store, double); err != nil {
		t.Errorf("the handler's event key variable was applied to a function: %v", err)
	}
	for name, tc := range map[string]struct {
		name string
		opts []idempotency.Option
		want string
	}{
		"empty name":    {"", nil, "name"},
		"WithKeyPrefix": {"double", []idempotency.Option{idempotency.WithKeyPrefix("x")}, "WithKeyPrefix"},
	} {
		_, err := newFunc(tc.name, store, double, tc.opts...)
		var ce *idempotency.ConfigError
		if !errors.As(err, &ce) || ce.Name != tc.want {
			t.Errorf("%s: err = %v, want *ConfigError naming %s", name, err, tc.want)
		}
	}
}
