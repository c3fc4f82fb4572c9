package template

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// A function's Metadata.Idempotency declares what its code gives the
// library outright, which the template cannot see otherwise: `idempotency
// inspect` and `lint` read the declaration to compute the keys, and what a
// delivery meets, as the function does (docs/operations.md). The helpers
// below let each example's test check that the declaration and its code
// agree.

// Repository is the repository's template.yaml.
func Repository() string { return filepath.Join(testenv.RepoRoot(), "template.yaml") }

// Declared returns the entries of Metadata.Idempotency of the function
// logicalID in the template at path.
func Declared(t testing.TB, path, logicalID string) map[string]string {
	t.Helper()
	fn := resource(t, path, logicalID)
	entries := map[string]string{}
	n := Lookup(fn, "Metadata", "Idempotency")
	for i := 0; n != nil && i+1 < len(n.Content); i += 2 {
		entries[n.Content[i].Value] = n.Content[i+1].Value
	}
	return entries
}

func resource(t testing.TB, path, logicalID string) *yaml.Node {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	fn := Lookup(doc.Content[0], "Resources", logicalID)
	if fn == nil {
		t.Fatalf("%s has no %s", path, logicalID)
	}
	return fn
}

// entryOptions are the options that an entry of Metadata.Idempotency
// stands for (WrapFunc is idempotency.WrapFunc's name), by the option's
// name.
var entryOptions = map[string]string{
	"WithEventKey": "EventKey", "WithPayloadValidation": "PayloadValidation",
	"WithKeyPrefix": "KeyPrefix", "WithKeyRequired": "KeyRequired",
	"WithExpiresAfter": "ExpiresAfter", "WithCompatibility": "Compatibility",
	"WithHash": "Hash", "WithPythonHandler": "PythonHandler",
	"WithAbandonPolicy": "AbandonPolicy",
}

// LiteralOptions returns what the Go file at path gives the library
// outright, as Metadata.Idempotency would declare it, for code that gives
// its options as literals (a string, true or false): the string argument
// of each idempotency.WithEventKey, WithPayloadValidation, ... call,
// outside idempotency.WithDefaults, and the name given to WrapFunc.
// Another kind of argument to one of those options fails t.
func LiteralOptions(t testing.TB, path string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "idempotency" {
			return true
		}
		name := sel.Sel.Name
		entry, option := entryOptions[name]
		switch {
		case name == "WithDefaults":
			return false // the environment wins over these: not declared
		case name == "WrapFunc":
			entry = "WrapFunc"
		case !option:
			return true
		}
		if len(call.Args) == 0 {
			t.Fatalf("%s: idempotency.%s without an argument", path, name)
		}
		switch arg := call.Args[0].(type) {
		case *ast.BasicLit:
			s, err := strconv.Unquote(arg.Value)
			if arg.Kind != token.STRING || err != nil {
				t.Fatalf("%s: idempotency.%s(%s): give a string literal, or check this option another way", path, name, arg.Value)
			}
			found[entry] = s
		case *ast.Ident:
			if arg.Name != "true" && arg.Name != "false" {
				t.Fatalf("%s: idempotency.%s(%s): give a literal, or check this option another way", path, name, arg.Name)
			}
			found[entry] = arg.Name
		default:
			t.Fatalf("%s: idempotency.%s: give a literal, or check this option another way", path, name)
		}
		return true
	})
	return found
}

// Deliver delivers one event to an idempotent wrapper.
type Deliver func(ctx context.Context, event []byte) error

// Handler is the code of CheckDeclared for a handler built with opts, as
// idempotency.New builds it, whose own function never runs.
func Handler(opts ...idempotency.Option) func(idempotency.Store) (Deliver, error) {
	return func(s idempotency.Store) (Deliver, error) {
		h, err := idempotency.New(s, func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, errors.New("ran") }, opts...)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, ev []byte) error { _, err := h.Invoke(ctx, ev); return err }, nil
	}
}

// CheckDeclared fails t unless the function logicalID of the template at
// path declares in Metadata.Idempotency what its code gives: the wrapper
// that code builds on a store (a handler or a function wrapper) and one
// built from the declaration, both in the function's environment as the
// template gives it and with AWS_LAMBDA_FUNCTION_NAME set, ask the store
// for the same key, payload hash and record expiry for each event, or
// refuse it alike. The store refuses every request, so that the code
// runs nothing: give events that have a key, or a function that requires
// one.
func CheckDeclared(t *testing.T, path, logicalID string, events [][]byte, code func(idempotency.Store) (Deliver, error)) {
	t.Helper()
	vars, err := VariablesOf(path, logicalID)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "POWERTOOLS_") {
			t.Setenv(name, "")
		}
	}
	for name, value := range vars {
		t.Setenv(name, value)
	}
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "stack-"+logicalID+"-1")

	s := &askedStore{}
	byCode, err := code(s)
	if err != nil {
		t.Fatalf("the code's wrapper: %v", err)
	}
	declared := Declared(t, path, logicalID)
	byDeclaration, err := declaredWrapper(t, s, declared)
	if err != nil {
		t.Fatalf("the wrapper that %s declares (%v): %v", logicalID, declared, err)
	}
	for _, ev := range events {
		want, got := s.deliver(t, byCode, ev), s.deliver(t, byDeclaration, ev)
		if got != want {
			t.Errorf("%s: for %s, its code asks %s, its declaration %v asks %s: declare in Metadata.Idempotency what the code gives outright", logicalID, ev, want, declared, got)
		}
	}
}

// declaredWrapper builds the wrapper that Metadata.Idempotency declares,
// as `idempotency inspect` does.
func declaredWrapper(t *testing.T, s idempotency.Store, declared map[string]string) (Deliver, error) {
	var opts []idempotency.Option
	for _, entry := range slices.Sorted(maps.Keys(declared)) {
		v := declared[entry]
		var opt idempotency.Option
		var err error
		switch entry {
		case "WrapFunc":
			continue
		case "EventKey":
			opt = idempotency.WithEventKey(v)
		case "PayloadValidation":
			opt = idempotency.WithPayloadValidation(v)
		case "KeyPrefix":
			opt = idempotency.WithKeyPrefix(v)
		case "PythonHandler":
			opt = idempotency.WithPythonHandler(v)
		case "KeyRequired":
			var b bool
			b, err = strconv.ParseBool(v)
			opt = idempotency.WithKeyRequired(b)
		case "ExpiresAfter":
			var d time.Duration
			d, err = time.ParseDuration(v)
			opt = idempotency.WithExpiresAfter(d)
		case "Compatibility":
			opt, err = named(v, idempotency.WithCompatibility, idempotency.OwnFormat, idempotency.PowertoolsPython, idempotency.PowertoolsTypeScript)
		case "AbandonPolicy":
			opt, err = named(v, idempotency.WithAbandonPolicy, idempotency.AbandonRetry, idempotency.AbandonBlock, idempotency.AbandonUncertain)
		case "Hash":
			opt, err = named(v, func(h hashName) idempotency.Option { return idempotency.WithHash(crypto.Hash(h)) },
				hashName(crypto.MD5), hashName(crypto.SHA1), hashName(crypto.SHA224), hashName(crypto.SHA256), hashName(crypto.SHA384), hashName(crypto.SHA512))
		default:
			t.Fatalf("Metadata.Idempotency.%s: no such entry", entry)
		}
		if err != nil {
			t.Fatalf("Metadata.Idempotency.%s: %v", entry, err)
		}
		opts = append(opts, opt)
	}
	opts = append(opts, idempotency.WithLogger(slog.New(slog.DiscardHandler)))
	fn := func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, errRan }
	if name, ok := declared["WrapFunc"]; ok {
		f, err := newFunc(name, s, fn, opts...)
		return func(ctx context.Context, ev []byte) error { _, err := f(ctx, ev); return err }, err
	}
	h, err := idempotency.New(s, fn, opts...)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, ev []byte) error { _, err := h.Invoke(ctx, ev); return err }, nil
}

// hashName is a hash as POWERTOOLS_IDEMPOTENCY_HASH_FUNCTION names it:
// md5, sha256.
type hashName crypto.Hash

func (h hashName) String() string {
	return strings.ToLower(strings.ReplaceAll(crypto.Hash(h).String(), "-", ""))
}

// named returns opt of the value among values whose String is v, in any
// case.
func named[T fmt.Stringer](v string, opt func(T) idempotency.Option, values ...T) (idempotency.Option, error) {
	for _, x := range values {
		if strings.EqualFold(v, x.String()) {
			return opt(x), nil
		}
	}
	return nil, fmt.Errorf("%q is none of %v", v, values)
}

// askedStore is a Store that remembers what it is asked to acquire, and
// refuses it, and every other request: a wrapper over it runs nothing.
type askedStore struct {
	asked string
}

var (
	errRefused = errors.New("the test store refuses every request")
	errRan     = errors.New("the declared wrapper ran its handler")
)

// deliver delivers ev to w and says what the store was asked: the key,
// the payload hash and the expiry of the record, or the error of an event
// refused before.
func (s *askedStore) deliver(t *testing.T, w Deliver, ev []byte) string {
	t.Helper()
	s.asked = ""
	err := w(t.Context(), ev)
	switch {
	case s.asked != "":
		return s.asked
	case errors.Is(err, errRan):
		return "nothing, and the handler runs without idempotency"
	case err == nil || errors.Is(err, errRefused):
		t.Fatalf("for %s, the store was asked nothing, and the wrapper answered %v", ev, err)
	}
	return fmt.Sprintf("nothing, and it fails with %T", err)
}

func (s *askedStore) Acquire(_ context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	s.asked = fmt.Sprintf("key %s, payload hash %q, expiry in %v", rec.Key, rec.PayloadHash, rec.Expiry.Sub(now))
	return nil, errRefused
}

func (s *askedStore) Complete(context.Context, *idempotency.Record) error { return errRefused }
func (s *askedStore) MarkUncertain(context.Context, *idempotency.Record) error {
	return errRefused
}
func (s *askedStore) Release(context.Context, string, string) error { return errRefused }
func (s *askedStore) Get(context.Context, string) (*idempotency.Record, error) {
	return nil, errRefused
}
func (s *askedStore) Reclaim(context.Context, *idempotency.Record, string) error { return errRefused }

// newFunc is idempotency.WrapFunc returning the *idempotency.ConfigError
// it panics with.
func newFunc[In, Out any](name string, store idempotency.Store, fn func(context.Context, In) (Out, error), opts ...idempotency.Option) (f func(context.Context, In) (Out, error), err error) {
	if ce := idempotencytest.ConfigError(func() { f = idempotency.WrapFunc(name, store, fn, opts...) }); ce != nil {
		return nil, ce
	}
	return f, nil
}
