package handler

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

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

// The library's variables that the tests set (docs/configuration.md
// lists them).
const (
	KeyPrefixEnv        = "POWERTOOLS_IDEMPOTENCY_KEY_PREFIX"
	CompatibilityEnv    = "POWERTOOLS_IDEMPOTENCY_COMPATIBILITY"
	HashEnv             = "POWERTOOLS_IDEMPOTENCY_HASH_FUNCTION"
	PythonHandlerEnv    = "POWERTOOLS_IDEMPOTENCY_PYTHON_HANDLER"
	AbandonPolicyEnv    = "POWERTOOLS_IDEMPOTENCY_ABANDON_POLICY"
	WaitEnv             = "POWERTOOLS_IDEMPOTENCY_WAIT_FOR_IN_PROGRESS"
	LeaseBeyondEnv      = "POWERTOOLS_IDEMPOTENCY_LEASE_BEYOND_DEADLINE"
	MetricsEnv          = "POWERTOOLS_IDEMPOTENCY_METRICS"
	MetricsDisabledEnv  = "POWERTOOLS_METRICS_DISABLED"
	MetricsNamespaceEnv = "POWERTOOLS_METRICS_NAMESPACE"
	OutcomeLogEnv       = "POWERTOOLS_IDEMPOTENCY_LOG_OUTCOME"
	DevEnv              = "POWERTOOLS_DEV"
)

// junk is a process environment in which every variable of the library
// would change a key or refuse the function: the command's wrappers must
// not read it.
var junk = map[string]string{
	DisabledEnv: "junk", EventKeyEnv: "junk((", ValidationEnv: "junk((", ExpiresAfterEnv: "junk",
	KeyPrefixEnv: "junk", CompatibilityEnv: "junk", HashEnv: "junk", PythonHandlerEnv: "junk",
	AbandonPolicyEnv: "junk", WaitEnv: "junk", LeaseBeyondEnv: "junk", MetricsEnv: "junk",
	MetricsDisabledEnv: "junk", MetricsNamespaceEnv: "AWS/junk", OutcomeLogEnv: "junk", DevEnv: "junk",
	FunctionNameEnv: "junk",
}

// setProcessEnv sets the process's variables of the library to values,
// and every other of them to "", which the library reads as unset.
func setProcessEnv(t *testing.T, values map[string]string) {
	t.Helper()
	for v := range junk {
		t.Setenv(v, values[v])
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
// environment of junk, and returns the keys and payload hashes of events,
// or its error.
func commandKeys(t *testing.T, f Function, events []string) (*Wrapper, []string, error) {
	t.Helper()
	setProcessEnv(t, junk)
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
	for v := range junk {
		if got := os.Getenv(v); got != junk[v] {
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
			opts: []idempotency.Option{idempotency.WithEventKey("order_id"), idempotency.WithExpiresAfter(2 * time.Hour), idempotency.WithCompatibility(idempotency.PowertoolsTypeScript), idempotency.WithHash(crypto.SHA512), idempotency.WithKeyRequired(true)},
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
				if errors.Is(err, ErrNoPrefix) {
					// The library's, for want of a name, which the
					// cases without one show.
					break
				}
				if libOK && strings.HasPrefix(libCE.Name, "POWERTOOLS_") && (!ok || ce.Name != libCE.Name) {
					t.Errorf("the library: %v; the command: %v; want a *ConfigError naming the same variable", wantErr, err)
				}
			case !slices.Equal(got, want) && !tt.anyKey:
				t.Errorf("keys:\n the library %q\n the command %q", want, got)
			}
		})
	}
}

// TestDefaults: the defaults that the command shows for a setting that
// nothing gives are the library's: its records expire after
// defaultExpiresAfter, and a function that declares every default it is
// shown, in each mode, keys events and answers a delivery as the one
// that declares none.
func TestDefaults(t *testing.T) {
	setProcessEnv(t, nil)
	s := &keyStore{}
	h, err := idempotency.New(s, func(context.Context, json.RawMessage) (string, error) { return "", nil }, quiet, idempotency.WithKeyPrefix("p"))
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

	now := time.Now()
	clock := func() time.Time { return now }
	abandoned := &idempotency.Record{Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Hour), Deadline: now.Add(-time.Minute), LeaseToken: "t"}
	for _, mode := range []string{"", "python", "typescript"} {
		f := Function{Env: env(FunctionNameEnv, "orders", PythonHandlerEnv, "app.h", ValidationEnv, "amount")}
		if mode != "" {
			f.Env[CompatibilityEnv] = Setting{mode, "the test"}
		}
		w, err := New(f, clock)
		if err != nil {
			t.Fatal(err)
		}
		declared := Function{Code: map[string]Setting{}, Env: f.Env}
		for _, s := range w.Settings {
			if s.Source == DefaultSource {
				declared.Code[s.Name] = Setting{s.Value, "--" + s.Name}
			}
		}
		if len(declared.Code) == 0 {
			t.Fatalf("%q: no default shown: %v", mode, w.Settings)
		}
		dw, err := New(declared, clock)
		if err != nil {
			t.Fatalf("%q: declaring %v: %v", mode, declared.Code, err)
		}
		for _, ev := range []string{`{"a":1,"amount":2}`, `{"a":1,"amount":3}`, `[1,"x"]`} {
			var got [2]string
			for i, w := range []*Wrapper{w, dw} {
				d, err := w.Deliver(t.Context(), []byte(ev), func(_ context.Context, key string) (*idempotency.Record, error) {
					rec := *abandoned
					rec.Key = key
					return &rec, nil
				})
				if err != nil {
					t.Fatal(err)
				}
				got[i] = fmt.Sprintf("%s %s runs=%v %s %s", d.Key, d.PayloadHash, d.Runs, d.Outcome, errType(d.Err))
			}
			if got[0] != got[1] {
				t.Errorf("%q, %s: with the defaults shown declared (%v), %s; without, %s", mode, ev, declared.Code, got[1], got[0])
			}
		}
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
func (s *keyStore) Complete(context.Context, *idempotency.Record) error      { return nil }
func (s *keyStore) MarkUncertain(context.Context, *idempotency.Record) error { return nil }
func (s *keyStore) Release(context.Context, string, string) error            { return nil }
func (s *keyStore) Reclaim(context.Context, *idempotency.Record, string) error {
	return nil
}
func (s *keyStore) Get(context.Context, string) (*idempotency.Record, error) {
	return nil, idempotency.ErrRecordNotFound
}
