package idempotency_test

import (
	"context"
	"crypto"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"regexp"
	"testing"

	"github.com/gopowertools/lambda/internal/keyformat"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

func nop(context.Context, json.RawMessage) (any, error) { return nil, nil }

// compatKey builds a handler with opts and returns its key of event.
func compatKey(t *testing.T, event string, opts ...idempotency.Option) string {
	t.Helper()
	h, err := idempotency.New(idempotencytest.NewStore(), nop, opts...)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := h.KeyOf([]byte(event))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// The key's format follows the mode, the hash and the environment, with
// the precedence of every setting: code, the variable, WithDefaults.
func TestCompatibilityKeyFormat(t *testing.T) {
	md5hex := func(s string) string { sum := md5.Sum([]byte(s)); return hex.EncodeToString(sum[:]) }
	tests := []struct {
		name string
		env  map[string]string
		opts []idempotency.Option
		want string // a regexp of the key of {"id":"o-1"} under the expression id
	}{
		{"own format", nil, nil, `^fn#[0-9a-f]{64}$`},
		{"own format with MD5", nil, []idempotency.Option{idempotency.WithHash(crypto.MD5)}, `^fn#` + md5hex(`"o-1"`) + `$`},
		{"python", nil, []idempotency.Option{idempotency.WithCompatibility(idempotency.PowertoolsPython), idempotency.WithPythonHandler("app.handler")},
			`^fn\.app\.handler#` + md5hex(`"o-1"`) + `$`},
		{"python with SHA-256", nil, []idempotency.Option{idempotency.WithCompatibility(idempotency.PowertoolsPython), idempotency.WithPythonHandler("app.handler"), idempotency.WithHash(crypto.SHA256)},
			`^fn\.app\.handler#[0-9a-f]{64}$`},
		{"python with a key prefix", nil, []idempotency.Option{idempotency.WithCompatibility(idempotency.PowertoolsPython), idempotency.WithKeyPrefix("custom")},
			`^custom#` + md5hex(`"o-1"`) + `$`},
		{"typescript", nil, []idempotency.Option{idempotency.WithCompatibility(idempotency.PowertoolsTypeScript)}, `^fn#[A-Za-z0-9+/]{22}==$`},
		{"python from the environment", map[string]string{"POWERTOOLS_IDEMPOTENCY_COMPATIBILITY": "Python", "POWERTOOLS_IDEMPOTENCY_PYTHON_HANDLER": "src.app.handler", "POWERTOOLS_IDEMPOTENCY_HASH_FUNCTION": "sha1"},
			nil, `^fn\.src\.app\.handler#[0-9a-f]{40}$`},
		{"code wins over the environment", map[string]string{"POWERTOOLS_IDEMPOTENCY_COMPATIBILITY": "python", "POWERTOOLS_IDEMPOTENCY_HASH_FUNCTION": "sha1"},
			[]idempotency.Option{idempotency.WithCompatibility(idempotency.OwnFormat), idempotency.WithHash(crypto.SHA512)}, `^fn#[0-9a-f]{128}$`},
		{"the environment wins over the defaults", map[string]string{"POWERTOOLS_IDEMPOTENCY_COMPATIBILITY": "typescript"},
			[]idempotency.Option{idempotency.WithDefaults(idempotency.WithCompatibility(idempotency.PowertoolsPython), idempotency.WithPythonHandler("app.handler"))}, `^fn#[A-Za-z0-9+/]{22}==$`},
		{"the variable's handler wins over the defaults'", map[string]string{"POWERTOOLS_IDEMPOTENCY_PYTHON_HANDLER": "env.handler"},
			[]idempotency.Option{idempotency.WithCompatibility(idempotency.PowertoolsPython), idempotency.WithDefaults(idempotency.WithPythonHandler("app.handler"))}, `^fn\.env\.handler#`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "fn")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			key := compatKey(t, `{"id":"o-1"}`, append(tc.opts, idempotency.WithEventKey("id"))...)
			if !regexp.MustCompile(tc.want).MatchString(key) {
				t.Errorf("key %q, want %s", key, tc.want)
			}
		})
	}
}

func TestCompatibilityConfigErrors(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		opts     []idempotency.Option
		wantName string
	}{
		{"unknown mode", nil, []idempotency.Option{idempotency.WithCompatibility(idempotency.Compatibility(7))}, "WithCompatibility"},
		{"unknown mode in the environment", map[string]string{"POWERTOOLS_IDEMPOTENCY_COMPATIBILITY": "java"}, nil, "POWERTOOLS_IDEMPOTENCY_COMPATIBILITY"},
		{"unsupported hash", nil, []idempotency.Option{idempotency.WithHash(crypto.SHA3_256)}, "WithHash"},
		{"unknown hash in the environment", map[string]string{"POWERTOOLS_IDEMPOTENCY_HASH_FUNCTION": "blake2b"}, nil, "POWERTOOLS_IDEMPOTENCY_HASH_FUNCTION"},
		{"python without its handler", nil, []idempotency.Option{idempotency.WithCompatibility(idempotency.PowertoolsPython)}, "WithPythonHandler"},
		{"python handler in another mode", nil, []idempotency.Option{idempotency.WithPythonHandler("app.handler")}, "WithPythonHandler"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "fn")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := idempotency.New(idempotencytest.NewStore(), nop, tc.opts...)
			var ce *idempotency.ConfigError
			if !errors.As(err, &ce) || ce.Name != tc.wantName {
				t.Fatalf("New error = %v, want a *ConfigError naming %s", err, tc.wantName)
			}
		})
	}

	t.Run("python without a function name", func(t *testing.T) {
		t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "")
		opts := []idempotency.Option{idempotency.WithCompatibility(idempotency.PowertoolsPython), idempotency.WithPythonHandler("app.handler")}
		if _, err := idempotency.New(idempotencytest.NewStore(), nop, opts...); !errors.As(err, new(*idempotency.ConfigError)) {
			t.Fatalf("New error = %v, want a *ConfigError", err)
		}
		// Disabled, a handler needs no key prefix.
		if _, err := idempotency.New(idempotencytest.NewStore(), nop, append(opts, idempotency.WithDisabled(true))...); err != nil {
			t.Fatalf("New, disabled: %v", err)
		}
	})
	t.Run("python handler of a function wrapper", func(t *testing.T) {
		_, err := newFunc("app.charge", idempotencytest.NewStore(), nop,
			idempotency.WithCompatibility(idempotency.PowertoolsPython), idempotency.WithPythonHandler("app.handler"))
		var ce *idempotency.ConfigError
		if !errors.As(err, &ce) || ce.Name != "WithPythonHandler" {
			t.Fatalf("NewFunc error = %v, want a *ConfigError naming WithPythonHandler", err)
		}
	})
}

// A store sees the mode of the invocation it serves, and a function
// wrapper in the own format inside a handler in a compatibility mode does
// not inherit it.
func TestCompatibilityInContext(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "fn")
	var outer, inner keyformat.Mode
	charge := idempotency.WrapFunc("charge", idempotencytest.NewStore(), func(ctx context.Context, id string) (string, error) {
		inner = keyformat.ModeOf(ctx)
		return id, nil
	})
	h := idempotency.Wrap(idempotencytest.NewStore(), func(ctx context.Context, in struct{ ID string }) (string, error) {
		outer = keyformat.ModeOf(ctx)
		return charge(ctx, in.ID)
	}, idempotency.WithCompatibility(idempotency.PowertoolsTypeScript), idempotency.WithEventKey("ID"))
	if _, err := h.Invoke(context.Background(), []byte(`{"ID":"o-1"}`)); err != nil {
		t.Fatal(err)
	}
	if outer != keyformat.TypeScript || inner != keyformat.Own {
		t.Errorf("handler saw %v, function wrapper %v; want typescript, own", outer, inner)
	}
	if got := keyformat.ModeOf(context.Background()); got != keyformat.Own {
		t.Errorf("outside an invocation: %v", got)
	}
}

// TestTypeScriptProtoRefused keys on whole objects that differ only in a
// member named __proto__, which Powertools TypeScript leaves out of the
// text it hashes: they would share a key. In TypeScript mode each is
// refused before any store call; the other formats key them apart.
func TestTypeScriptProtoRefused(t *testing.T) {
	t.Parallel()
	events := []string{`{"order":{"id":"a","__proto__":1}}`, `{"order":{"id":"a","__proto__":2}}`}
	var e echo
	h := idempotency.Wrap(untouchedStore{t}, e.handle, idempotency.WithKeyPrefix(prefix),
		idempotency.WithCompatibility(idempotency.PowertoolsTypeScript), idempotency.WithEventKey("order"))
	for _, event := range events {
		_, err := h.Invoke(context.Background(), []byte(event))
		if ie, ok := errors.AsType[*idempotency.InvalidEventError](err); !ok || ie.Expression != "order" {
			t.Errorf("%s: %v; want an *InvalidEventError for order", event, err)
		}
	}
	if e.calls != 0 {
		t.Errorf("the handler ran %d times", e.calls)
	}
	for _, compat := range []idempotency.Compatibility{idempotency.OwnFormat, idempotency.PowertoolsPython} {
		e := echo{}
		h := idempotency.Wrap(idempotencytest.NewStore(), e.handle, idempotency.WithKeyPrefix(prefix),
			idempotency.WithCompatibility(compat), idempotency.WithEventKey("order"))
		for _, event := range events {
			if _, err := h.Invoke(context.Background(), []byte(event)); err != nil {
				t.Errorf("%v, %s: %v", compat, event, err)
			}
		}
		if e.calls != 2 {
			t.Errorf("%v: the handler ran %d times, want twice", compat, e.calls)
		}
	}
}
