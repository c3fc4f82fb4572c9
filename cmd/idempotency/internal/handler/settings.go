package handler

import (
	"crypto"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// The environment variables that powertools/idempotency reads when a
// wrapper is built (its package documentation lists them), and the
// function's name, which Lambda sets. TestEveryVariable checks the list
// against the library's source.
const (
	DisabledEnv         = "POWERTOOLS_IDEMPOTENCY_DISABLED"
	EventKeyEnv         = "POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH"
	ValidationEnv       = "POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH"
	ExpiresAfterEnv     = "POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER"
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
	FunctionNameEnv     = template.FunctionNameEnv
)

// The library's defaults, which New gives outright when nothing else
// gives a setting, so that the library never reads a variable of the
// command's own environment: TestDefaults checks them against the
// library's.
const (
	defaultExpiresAfter     = time.Hour
	defaultMetricsNamespace = "default_namespace"
)

// Variables are the variables of the function's environment that the
// library reads; a function's Env needs no other.
var Variables = []string{
	DisabledEnv, EventKeyEnv, ValidationEnv, ExpiresAfterEnv, KeyPrefixEnv,
	CompatibilityEnv, HashEnv, PythonHandlerEnv, AbandonPolicyEnv, WaitEnv,
	LeaseBeyondEnv, MetricsEnv, MetricsDisabledEnv, MetricsNamespaceEnv,
	OutcomeLogEnv, DevEnv, FunctionNameEnv,
}

// Entries are the entries of Metadata.Idempotency, each what its code
// gives outright with the option of that name (WrapFunc: the name given
// to idempotency.WrapFunc). They are everything a function's code can set
// that changes its keys, or what a delivery meets; the command's flags
// are the same settings, in kebab case (--event-key).
var Entries = []string{
	"WrapFunc", "EventKey", "PayloadValidation", "KeyPrefix", "KeyRequired",
	"ExpiresAfter", "Compatibility", "Hash", "PythonHandler", "AbandonPolicy",
}

// hashes are the hashes idempotency.WithHash accepts, by the names that
// POWERTOOLS_IDEMPOTENCY_HASH_FUNCTION gives them (Python's hashlib's and
// Node's crypto's).
var hashes = map[string]crypto.Hash{
	"md5": crypto.MD5, "sha1": crypto.SHA1, "sha224": crypto.SHA224,
	"sha256": crypto.SHA256, "sha384": crypto.SHA384, "sha512": crypto.SHA512,
}

// The values the library reads in its variables, in any case.
var (
	compatibilities = []idempotency.Compatibility{idempotency.OwnFormat, idempotency.PowertoolsPython, idempotency.PowertoolsTypeScript}
	abandonPolicies = []idempotency.AbandonPolicy{idempotency.AbandonRetry, idempotency.AbandonBlock, idempotency.AbandonUncertain}
)

// DeclarationError reports an entry of Metadata.Idempotency, or a flag of
// the command, that cannot be read: an unknown entry, or a value of the
// wrong kind. It says nothing of the function, which never reads the
// declaration; but the command cannot know what the function's code
// gives.
type DeclarationError struct {
	// Source is the entry or the flag: Metadata.Idempotency.Hash, --hash.
	Source string
	Err    error
}

func (e *DeclarationError) Error() string { return e.Source + ": " + e.Err.Error() }

func (e *DeclarationError) Unwrap() error { return e.Err }

// resolver resolves the settings of one function as the library does:
// what its code gives outright, then its environment, then the defaults.
type resolver struct {
	f        Function
	wrapper  bool // a function wrapper: the event-shaped variables do not apply
	disabled bool // POWERTOOLS_IDEMPOTENCY_DISABLED
	opts     []idempotency.Option
	settings []Resolved
	// options are the sources of the options given, by the option's
	// name as a *ConfigError names it.
	options map[string]given
}

// given is where an option given to the library came from: a setting,
// and the variable when it is the environment's.
type given struct {
	Setting
	variable string
}

// lookup returns the setting of the entry (code) or, when the code does
// not give it, of the variable, with its name: a variable that is empty is
// unset, and an event-shaped one (handlerOnly) does not apply to a
// function wrapper.
func (r *resolver) lookup(entry, variable string, handlerOnly bool) (s Setting, fromVariable string, ok bool) {
	if s, ok := r.f.Code[entry]; ok && entry != "" {
		return s, "", true
	}
	if variable == "" || (handlerOnly && r.wrapper) {
		return Setting{}, "", false
	}
	if s, ok := r.f.Env[variable]; ok && s.Value != "" {
		return s, variable, true
	}
	return Setting{}, "", false
}

// badValue returns the error of a value s that cannot be read: a
// *DeclarationError for one the code is declared to give, a
// *idempotency.ConfigError naming the variable, as the library's own, for
// one of the environment, which the function refuses at cold start.
func badValue(s Setting, variable string, err error) error {
	if variable != "" {
		return fmt.Errorf("%w (%s)", &idempotency.ConfigError{Name: variable, Err: err}, s.Source)
	}
	return &DeclarationError{Source: s.Source, Err: err}
}

// show records a setting for the caller.
func (r *resolver) show(name, value, source string) {
	r.settings = append(r.settings, Resolved{Name: name, Setting: Setting{Value: value, Source: source}})
}

// give adds an option, given outright, whose source is s (of the
// variable, when it is not "").
func (r *resolver) give(option string, s Setting, variable string, opt idempotency.Option) {
	r.opts = append(r.opts, opt)
	r.options[option] = given{s, variable}
}

// str resolves a setting whose value is the option's argument as written.
// By default it is "", which it gives outright too.
func (r *resolver) str(entry, variable, option string, handlerOnly bool, opt func(string) idempotency.Option) {
	s, from, ok := r.lookup(entry, variable, handlerOnly)
	if !ok {
		r.opts = append(r.opts, opt(""))
		r.show(entry, "", DefaultSource)
		return
	}
	r.give(option, s, from, opt(s.Value))
	r.show(entry, s.Value, s.Source)
}

// parse resolves a setting whose value read reads, and returns it, or
// nil when nothing gives it: then it gives fallback, the library's
// default, when there is one. A setting of the environment only (no
// entry) is shown when it is set, another always, def by default.
func parse[T any](r *resolver, entry, variable, option string, handlerOnly bool, read func(string) (T, error), opt func(T) idempotency.Option, def string, fallback idempotency.Option) (*T, error) {
	name := entry
	if name == "" {
		name = variable
	}
	s, from, ok := r.lookup(entry, variable, handlerOnly)
	if !ok {
		if fallback != nil {
			r.opts = append(r.opts, fallback)
		}
		if entry != "" {
			r.show(name, def, DefaultSource)
		}
		return nil, nil
	}
	v, err := read(s.Value)
	if err != nil {
		return nil, badValue(s, from, err)
	}
	r.give(option, s, from, opt(v))
	r.show(name, s.Value, s.Source)
	return &v, nil
}

// order is the order of Wrapper.Settings; the variables come after.
var order = []string{"WrapFunc", "KeyPrefix", "EventKey", "PayloadValidation", "KeyRequired", "ExpiresAfter", "Compatibility", "Hash", "PythonHandler", "AbandonPolicy"}

// ordered returns the settings shown, in order.
func (r *resolver) ordered() []Resolved {
	rank := func(name string) int {
		if i := slices.Index(order, name); i >= 0 {
			return i
		}
		return len(order)
	}
	return slices.SortedStableFunc(slices.Values(r.settings), func(a, b Resolved) int { return rank(a.Name) - rank(b.Name) })
}

// DefaultSource is the source of a setting that nothing gives.
const DefaultSource = "the library's default"

// readBool reads a boolean as the library reads its variables (Python's
// strtobool): 1, t, true, y, yes, on, and 0, f, false, n, no, off, in any
// case.
func readBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "t", "true", "y", "yes", "on":
		return true, nil
	case "0", "f", "false", "n", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (want one of 1, t, true, y, yes, on, 0, f, false, n, no, off)", v)
}

func readDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a Go duration such as 1h or 90m", v)
	}
	return d, nil
}

func readCompatibility(v string) (idempotency.Compatibility, error) {
	for _, c := range compatibilities {
		if strings.EqualFold(v, c.String()) {
			return c, nil
		}
	}
	return 0, fmt.Errorf("%q is not own, python or typescript", v)
}

func readHash(v string) (crypto.Hash, error) {
	if h, ok := hashes[strings.ToLower(v)]; ok {
		return h, nil
	}
	return 0, fmt.Errorf("%q is not md5, sha1, sha224, sha256, sha384 or sha512", v)
}

func readAbandonPolicy(v string) (idempotency.AbandonPolicy, error) {
	for _, p := range abandonPolicies {
		if strings.EqualFold(v, p.String()) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%q is not retry, block or uncertain", v)
}

// checkEntries refuses an entry of the code that is not one of Entries.
func checkEntries(code map[string]Setting) error {
	for name, s := range code {
		if !slices.Contains(Entries, name) {
			return &DeclarationError{Source: s.Source, Err: fmt.Errorf("no such setting %q (the entries of Metadata.%s: %s)", name, template.MetadataKey, strings.Join(Entries, ", "))}
		}
	}
	return nil
}

// ErrNoPrefix is the error of a handler whose key prefix nothing gives:
// no KeyPrefix, and not the function's name, which a template does not
// know before it is deployed.
var ErrNoPrefix = errors.New("no key prefix: the key starts with the deployed function's name (" + FunctionNameEnv + "), which nothing gives")
