package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/internal/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

var quiet = idempotency.WithLogger(discard)

// env returns the environment of a Function, its variables from the
// template.
func env(kv ...string) map[string]Setting {
	m := map[string]Setting{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = Setting{kv[i+1], kv[i] + " in the template"}
	}
	return m
}

// code returns the Code of a Function, declared in Metadata.
func code(kv ...string) map[string]Setting {
	m := map[string]Setting{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = Setting{kv[i+1], "Metadata.Idempotency." + kv[i]}
	}
	return m
}

// setProcessEnv sets the process's variables of the library to values,
// and every other of them to "", which the library reads as unset.
func setProcessEnv(t *testing.T, values map[string]string) {
	t.Helper()
	for _, v := range Variables {
		t.Setenv(v, values[v])
	}
}

// junk is a process environment in which every variable would change a
// key or refuse the function: the command's wrappers must not read it.
var junk = map[string]string{
	DisabledEnv: "junk", EventKeyEnv: "junk((", ValidationEnv: "junk((", ExpiresAfterEnv: "junk",
	KeyPrefixEnv: "junk", CompatibilityEnv: "junk", HashEnv: "junk", PythonHandlerEnv: "junk",
	AbandonPolicyEnv: "junk", WaitEnv: "junk", LeaseBeyondEnv: "junk", MetricsEnv: "junk",
	MetricsDisabledEnv: "junk", MetricsNamespaceEnv: "AWS/junk", OutcomeLogEnv: "junk", DevEnv: "junk",
}

// TestEveryVariable: Variables are exactly the variables that the library
// reads (its Go files name each one as a string constant), apart from the
// DynamoDB store's table.
func TestEveryVariable(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "powertools", "idempotency", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the library's files: %v", err)
	}
	named := regexp.MustCompile(`"(POWERTOOLS_[A-Z_]+|AWS_LAMBDA_FUNCTION_NAME)"`)
	read := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllSubmatch(src, -1) {
			read[string(m[1])] = true
		}
	}
	for v := range read {
		if !slices.Contains(Variables, v) {
			t.Errorf("the library reads %s, which the command does not", v)
		}
	}
	for _, v := range Variables {
		if !read[v] {
			t.Errorf("the command reads %s, which the library does not", v)
		}
	}
}

// libraryKeys builds the library's own handler, or function wrapper, in
// the process environment values with opts, and returns the keys and
// payload hashes of events, or its error.
func libraryKeys(t *testing.T, values map[string]string, wrapFunc string, events []string, opts ...idempotency.Option) ([]string, error) {
	t.Helper()
	setProcessEnv(t, values)
	opts = append([]idempotency.Option{quiet}, opts...)
	var keys []string
	if wrapFunc != "" {
		s := &keyStore{}
		var fn func(context.Context, json.RawMessage) (string, error)
		if err := idempotencytest.ConfigError(func() {
			fn = idempotency.WrapFunc(wrapFunc, s, func(context.Context, json.RawMessage) (string, error) { return "", nil }, opts...)
		}); err != nil {
			return nil, err
		}
		for _, ev := range events {
			*s = keyStore{}
			_, err := fn(t.Context(), json.RawMessage(ev))
			keys = append(keys, s.key+" "+s.hash+" "+errType(err))
		}
		return keys, nil
	}
	h, err := idempotency.New(&keyStore{}, func(context.Context, json.RawMessage) (string, error) { return "", nil }, opts...)
	if err != nil {
		return nil, err
	}
	for _, ev := range events {
		key, hash, err := h.KeyOf([]byte(ev))
		keys = append(keys, key+" "+hash+" "+errType(err))
	}
	return keys, nil
}

// commandKeys builds the command's wrapper of f in a process
// environment of junk (but for the function's name, which a function
// wrapper takes from it), and returns the keys and payload hashes of
// events, or its error.
func commandKeys(t *testing.T, f Function, events []string) (*Wrapper, []string, error) {
	t.Helper()
	process := maps.Clone(junk)
	process[FunctionNameEnv] = "junk"
	if _, ok := f.Code["WrapFunc"]; ok {
		process[FunctionNameEnv] = f.Env[FunctionNameEnv].Value
	}
	setProcessEnv(t, process)
	w, err := New(f, time.Now)
	if err != nil {
		return nil, nil, err
	}
	var keys []string
	for _, ev := range events {
		d, err := w.Deliver(t.Context(), []byte(ev), func(context.Context, string) (*idempotency.Record, error) { return nil, nil })
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, d.Key+" "+d.PayloadHash+" "+errType(d.Err))
	}
	for _, v := range Variables {
		if got := os.Getenv(v); got != process[v] {
			t.Errorf("New changed the process's %s to %q", v, got)
		}
	}
	return w, keys, nil
}

func errType(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, new(*idempotency.InvalidEventError)):
		return "InvalidEventError"
	case errors.As(err, new(*idempotency.MissingKeyError)):
		return "MissingKeyError"
	}
	return "error"
}

// TestSameAsTheLibrary: the command's wrapper of a function, given its
// environment as options, computes the keys and payload hashes that the
// library's own computes in that environment, and refuses what it refuses
// (with a *ConfigError naming the same variable); the command's own
// process environment changes nothing, and is left as it was.
func TestSameAsTheLibrary(t *testing.T) {
	events := []string{
		`{"order_id":"o-1","amount":10,"body":"{\"order_id\":\"b-1\"}"}`,
		`{"order_id":"o-1","amount":11}`,
		`{"order_id":1.5,"amount":[1,"x",{"b":null,"a":true}]}`,
		`{"amount":10}`,
		`{"order_id":"o-1","order_id":"o-2"}`,
		`[1,2]`,
	}
	for _, tt := range []struct {
		name     string
		env      []string
		code     []string
		wrapFunc string
		opts     []idempotency.Option // the library's options for code
		// anyKey: the keys of a disabled function without a name are
		// not compared: it keeps no record, and the library's prefix
		// is then read from the process environment.
		anyKey bool
	}{
		{name: "no name: no prefix"},
		{name: "the function's name", env: []string{FunctionNameEnv, "orders"}},
		{name: "key paths", env: []string{FunctionNameEnv, "orders", EventKeyEnv, "order_id", ValidationEnv, "amount"}},
		{name: "key path from a body", env: []string{FunctionNameEnv, "orders", EventKeyEnv, "powertools_json(body).order_id"}},
		{name: "prefix", env: []string{FunctionNameEnv, "orders", KeyPrefixEnv, "shop"}},
		{name: "python", env: []string{FunctionNameEnv, "orders", CompatibilityEnv, "python", PythonHandlerEnv, "app.lambda_handler", EventKeyEnv, "order_id", ValidationEnv, "amount"}},
		{name: "python, a prefix", env: []string{FunctionNameEnv, "orders", CompatibilityEnv, "Python", KeyPrefixEnv, "shop", PythonHandlerEnv, "ignored"}},
		{name: "python, no handler", env: []string{FunctionNameEnv, "orders", CompatibilityEnv, "PYTHON"}},
		{name: "python, no name", env: []string{CompatibilityEnv, "python", PythonHandlerEnv, "app.h"}},
		{name: "typescript, sha1", env: []string{FunctionNameEnv, "orders", CompatibilityEnv, "TypeScript", HashEnv, "SHA1", EventKeyEnv, "order_id"}},
		{name: "sha384", env: []string{FunctionNameEnv, "orders", HashEnv, "sha384", ValidationEnv, "amount"}},
		{name: "own, a python handler", env: []string{FunctionNameEnv, "orders", CompatibilityEnv, "own", PythonHandlerEnv, "app.h"}},
		{name: "settings that change no key", env: []string{FunctionNameEnv, "orders", ExpiresAfterEnv, "96h", AbandonPolicyEnv, "Block", WaitEnv, "yes", LeaseBeyondEnv, "30s", MetricsEnv, "on", MetricsNamespaceEnv, "Shop", OutcomeLogEnv, "1", DevEnv, "true"}},
		{name: "metrics off by the switch of all", env: []string{FunctionNameEnv, "orders", MetricsDisabledEnv, "true", MetricsEnv, "bogus", MetricsNamespaceEnv, "AWS/bad"}},
		{name: "disabled, no name", env: []string{DisabledEnv, "true"}, anyKey: true},
		{name: "disabled, python, no handler", env: []string{DisabledEnv, "TRUE", CompatibilityEnv, "python"}, anyKey: true},
		{name: "bad compatibility", env: []string{FunctionNameEnv, "orders", CompatibilityEnv, "cobol"}},
		{name: "bad hash", env: []string{FunctionNameEnv, "orders", HashEnv, "crc32"}},
		{name: "bad expiry", env: []string{FunctionNameEnv, "orders", ExpiresAfterEnv, "3600"}},
		{name: "short expiry", env: []string{FunctionNameEnv, "orders", ExpiresAfterEnv, "10ms"}},
		{name: "bad key path", env: []string{FunctionNameEnv, "orders", EventKeyEnv, "powertools_json(body.x"}},
		{name: "bad validation", env: []string{FunctionNameEnv, "orders", ValidationEnv, "[a,"}},
		{name: "bad switch", env: []string{FunctionNameEnv, "orders", DisabledEnv, "nope"}},
		{name: "bad wait", env: []string{FunctionNameEnv, "orders", WaitEnv, "maybe"}},
		{name: "bad lease", env: []string{FunctionNameEnv, "orders", LeaseBeyondEnv, "soon"}},
		{name: "negative lease", env: []string{FunctionNameEnv, "orders", LeaseBeyondEnv, "-1s"}},
		{name: "bad policy", env: []string{FunctionNameEnv, "orders", AbandonPolicyEnv, "never"}},
		{name: "bad metrics", env: []string{FunctionNameEnv, "orders", MetricsEnv, "perhaps"}},
		{name: "bad metrics switch", env: []string{FunctionNameEnv, "orders", MetricsDisabledEnv, "sometimes"}},
		{name: "bad namespace", env: []string{FunctionNameEnv, "orders", MetricsEnv, "true", MetricsNamespaceEnv, "AWS/Lambda"}},
		{name: "bad outcome log", env: []string{FunctionNameEnv, "orders", OutcomeLogEnv, "loud"}},
		{
			name: "code wins, and its variable is not read", env: []string{FunctionNameEnv, "orders", EventKeyEnv, "bad((", ExpiresAfterEnv, "bad", CompatibilityEnv, "bad", HashEnv, "bad"},
			code: []string{"EventKey", "order_id", "ExpiresAfter", "2h", "Compatibility", "typescript", "Hash", "sha512", "KeyRequired", "true"},
			opts: []idempotency.Option{idempotency.WithEventKey("order_id"), idempotency.WithExpiresAfter(2 * time.Hour), idempotency.WithCompatibility(idempotency.PowertoolsTypeScript), idempotency.WithHash(hashes["sha512"]), idempotency.WithKeyRequired(true)},
		},
		{
			name: "python in code", env: []string{FunctionNameEnv, "orders"},
			code: []string{"Compatibility", "python", "PythonHandler", "src.app.handler", "PayloadValidation", "amount"},
			opts: []idempotency.Option{idempotency.WithCompatibility(idempotency.PowertoolsPython), idempotency.WithPythonHandler("src.app.handler"), idempotency.WithPayloadValidation("amount")},
		},
		{
			name: "python handler in code, own mode", env: []string{FunctionNameEnv, "orders"},
			code: []string{"PythonHandler", "app.h"},
			opts: []idempotency.Option{idempotency.WithPythonHandler("app.h")},
		},
		{
			name: "a short expiry in code", env: []string{FunctionNameEnv, "orders"},
			code: []string{"ExpiresAfter", "500ms"},
			opts: []idempotency.Option{idempotency.WithExpiresAfter(500 * time.Millisecond)},
		},
		{name: "wrapper", env: []string{FunctionNameEnv, "orders", EventKeyEnv, "ignored", ValidationEnv, "ignored", KeyPrefixEnv, "ignored", MetricsEnv, "ignored"}, wrapFunc: "orders.fulfil"},
		{name: "wrapper, no name", wrapFunc: "tick"},
		{
			name: "wrapper keyed in code", env: []string{FunctionNameEnv, "orders", CompatibilityEnv, "python"}, wrapFunc: "orders.fulfil",
			code: []string{"EventKey", "order_id", "PayloadValidation", "amount"},
			opts: []idempotency.Option{idempotency.WithEventKey("order_id"), idempotency.WithPayloadValidation("amount")},
		},
		{
			name: "wrapper with a prefix", env: []string{FunctionNameEnv, "orders"}, wrapFunc: "orders.fulfil",
			code: []string{"KeyPrefix", "p"}, opts: []idempotency.Option{idempotency.WithKeyPrefix("p")},
		},
		{
			name: "wrapper with a python handler", env: []string{FunctionNameEnv, "orders", CompatibilityEnv, "python"}, wrapFunc: "orders.fulfil",
			code: []string{"PythonHandler", "app.h"}, opts: []idempotency.Option{idempotency.WithPythonHandler("app.h")},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			values := map[string]string{}
			for i := 0; i+1 < len(tt.env); i += 2 {
				values[tt.env[i]] = tt.env[i+1]
			}
			want, wantErr := libraryKeys(t, values, tt.wrapFunc, events, tt.opts...)
			f := Function{Code: code(tt.code...), Env: env(tt.env...)}
			if tt.wrapFunc != "" {
				f.Code["WrapFunc"] = Setting{tt.wrapFunc, "--wrap-func"}
			}
			_, got, err := commandKeys(t, f, events)
			switch {
			case (wantErr == nil) != (err == nil):
				t.Fatalf("the library: %v; the command: %v", wantErr, err)
			case err != nil:
				libCE, libOK := errors.AsType[*idempotency.ConfigError](wantErr)
				ce, ok := errors.AsType[*idempotency.ConfigError](err)
				if libOK && strings.HasPrefix(libCE.Name, "POWERTOOLS_") && (!ok || ce.Name != libCE.Name) {
					t.Errorf("the library: %v; the command: %v; want a *ConfigError naming the same variable", wantErr, err)
				}
				if !libOK && !errors.Is(err, ErrNoPrefix) {
					t.Errorf("the library: %v; the command: %v", wantErr, err)
				}
			case !slices.Equal(got, want) && !tt.anyKey:
				t.Errorf("keys:\n the library %q\n the command %q", want, got)
			}
		})
	}
}

// TestDefaults: the defaults that the command gives outright, so that
// the library reads none of its own environment, are the library's.
func TestDefaults(t *testing.T) {
	setProcessEnv(t, map[string]string{FunctionNameEnv: "orders", MetricsEnv: "true"})
	s := &keyStore{}
	var metrics bytes.Buffer
	h, err := idempotency.New(s, func(context.Context, json.RawMessage) (string, error) { return "", nil }, quiet, idempotency.WithMetrics(&metrics))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := h.Invoke(t.Context(), []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if got := s.expiry.Sub(start).Round(time.Minute); got != defaultExpiresAfter {
		t.Errorf("the library's records expire after %v, the command's default is %v", got, defaultExpiresAfter)
	}
	if !strings.Contains(metrics.String(), `"Namespace":"`+defaultMetricsNamespace+`"`) {
		t.Errorf("the library's default namespace is not %q: %s", defaultMetricsNamespace, metrics.String())
	}
}

// keyStore is a Store that keeps nothing, and remembers the record it was
// last asked to acquire.
type keyStore struct {
	key, hash string
	expiry    time.Time
}

func (s *keyStore) Acquire(_ context.Context, rec *idempotency.Record, _ time.Time) (*idempotency.Record, error) {
	s.key, s.hash, s.expiry = rec.Key, rec.PayloadHash, rec.Expiry
	return nil, nil
}
func (s *keyStore) Complete(context.Context, *idempotency.Record) error { return nil }
func (s *keyStore) Release(context.Context, string, string) error       { return nil }
func (s *keyStore) Reclaim(context.Context, *idempotency.Record, string) error {
	return nil
}
func (s *keyStore) Get(context.Context, string) (*idempotency.Record, error) {
	return nil, idempotency.ErrRecordNotFound
}
