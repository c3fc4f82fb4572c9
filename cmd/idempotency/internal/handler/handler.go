// Package handler builds the idempotent wrapper that a function's settings
// make, with powertools/idempotency's own code, over a store that never
// writes: to compute the keys the function computes, to find what a
// delivery of an event meets (Wrapper.Deliver), or to find that the
// function would not start.
//
// The settings come from what the function's code gives outright (its
// Metadata.Idempotency in a template, or the command's flags), each read
// into its option, and from its environment, given with
// idempotency.WithEnvironment: the library resolves them as it does in the
// function, and says which option or variable gave each setting
// (internal/settingsource), for the operator to see where it came from.
package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
	"github.com/gopowertools/lambda/internal/keyformat"
	"github.com/gopowertools/lambda/internal/settingsource"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Setting is one of a function's settings as written, and where it comes
// from, in words for the operator: "Metadata.Idempotency.EventKey",
// "--event-key", "POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH in the
// template".
type Setting struct {
	Value  string
	Source string
}

// Function is what a function's idempotency depends on.
type Function struct {
	// Code is what its code gives outright, by the name of the entry of
	// Metadata.Idempotency that declares it (see entries).
	Code map[string]Setting
	// Env is its environment, by variable name: the library reads its
	// own variables there, and nowhere else.
	Env map[string]Setting
}

// Resolved is one of a function's settings as the library is given it.
type Resolved struct {
	// Name is the entry of Metadata.Idempotency (EventKey), or the
	// variable for a setting that only the environment gives.
	Name string
	Setting
}

// Wrapper is the idempotent handler, or function wrapper, that a
// function's settings make, built by the library over a store that reads
// through the Lookup of each delivery and never writes. Its handler never
// runs anything: it reports that a delivery reached it.
type Wrapper struct {
	// Settings are the function's settings, each with where it came from:
	// WrapFunc (for a function wrapper), KeyPrefix (with no Value when
	// the library makes it: the key shows it), EventKey,
	// PayloadValidation, KeyRequired, ExpiresAfter, Compatibility, Hash,
	// PythonHandler (in PowertoolsPython's mode) and AbandonPolicy, then
	// the settings of the environment that are set: a disabled wrapper,
	// a wait for an invocation in progress, a lease beyond the deadline.
	Settings []Resolved
	// ExpiresAfter is the record expiry.
	ExpiresAfter time.Duration

	built
	// undecodable is the function's handler but for its input type,
	// which no event decodes into; nil for a function wrapper.
	undecodable *built
	// at, when not zero, is the time of the wrappers' clock.
	at time.Time
	// mode is the function's record format.
	mode keyformat.Mode
}

// InMode returns ctx in the function's record format (its
// Compatibility), for the requests the command sends its store besides a
// delivery's: a scan reads, and an operator's write writes, a record as
// the function does (Powertools TypeScript keeps a response as DynamoDB's
// types).
func (w *Wrapper) InMode(ctx context.Context) context.Context {
	return keyformat.WithMode(ctx, w.mode)
}

// Setting returns the setting name of Settings.
func (w *Wrapper) Setting(name string) (Resolved, bool) {
	i := slices.IndexFunc(w.Settings, func(r Resolved) bool { return r.Name == name })
	if i < 0 {
		return Resolved{}, false
	}
	return w.Settings[i], true
}

// discard is the wrappers' logger: their warnings are the function's, not
// the command's.
var discard = slog.New(slog.DiscardHandler)

// New builds the wrapper of f, by idempotency.New for a handler, or
// idempotency.WrapFunc for a function wrapper (Code's WrapFunc), which
// reads its argument's JSON as an event; now is its clock.
//
// Its errors are a *DeclarationError for an entry of Code that cannot be
// read, ErrNoPrefix when the function would start once it has a name,
// and otherwise what keeps the function from starting: the library's
// *idempotency.ConfigError, with where the setting it names was given.
func New(f Function, now func() time.Time) (*Wrapper, error) {
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	wrap, wrapper := f.Code["WrapFunc"]
	// The function's own wrapper, as it is built at cold start: what it
	// refuses, the command refuses.
	if _, err := build(wrapper, wrap.Value, append(opts, idempotency.WithLogger(discard))); err != nil {
		if f.startsNamed(wrapper, wrap.Value, opts) {
			return nil, ErrNoPrefix
		}
		return nil, f.explain(err)
	}
	sources, err := settingsource.Of(opts, wrapper)
	if err != nil {
		return nil, f.explain(err)
	}
	w := &Wrapper{Settings: f.settings(sources, wrapper)}
	expires, _ := w.Setting("ExpiresAfter")
	w.ExpiresAfter, _ = time.ParseDuration(expires.Value) // the library read it so
	compat, _ := w.Setting("Compatibility")
	for _, c := range []idempotency.Compatibility{idempotency.PowertoolsPython, idempotency.PowertoolsTypeScript} {
		if strings.EqualFold(compat.Value, c.String()) { // the library read it so
			w.mode = keyformat.Mode(c)
		}
	}
	// The probe is the function's wrapper but for what it does besides
	// answering: a delivery that meets an invocation in progress is told
	// so at once, rather than waiting for it; what it was told goes to
	// the delivery's probe, and no metrics to standard output.
	clock := func() time.Time {
		if !w.at.IsZero() {
			return w.at
		}
		return now()
	}
	probeOpts := append(opts,
		idempotency.WithWaitForInProgress(false),
		idempotency.WithCloudWatchMetrics(nil, ""),
		idempotency.WithLogger(discard),
		idempotency.WithClock(clock),
		idempotency.WithObserver(observe),
	)
	p, err := build(wrapper, wrap.Value, probeOpts)
	if err != nil {
		return nil, f.explain(err)
	}
	w.built = *p
	if !wrapper {
		h, err := idempotency.New(store{}, neverReached, probeOpts...)
		if err != nil {
			return nil, f.explain(err)
		}
		w.undecodable = handlerOf(h)
	}
	return w, nil
}

// built is a wrapper that the library built over the probe's store.
type built struct {
	deliver func(ctx context.Context, event []byte) error
	// keyOf is the handler's KeyOf; nil for a function wrapper, whose
	// key is the one its store is asked for.
	keyOf func(event []byte) (key, hash string, err error)
}

// build builds the library's handler with opts, or its function wrapper
// named name, over the probe's store, and returns its *ConfigError.
func build(wrapper bool, name string, opts []idempotency.Option) (*built, error) {
	var s store
	if wrapper {
		fn, err := wrapFunc(name, s, opts)
		if err != nil {
			return nil, err
		}
		return &built{deliver: func(ctx context.Context, event []byte) error {
			_, err := fn(ctx, event)
			return err
		}}, nil
	}
	h, err := idempotency.New(s, reach, opts...)
	if err != nil {
		return nil, err
	}
	return handlerOf(h), nil
}

// wrapFunc is idempotency.WrapFunc over reach, returning the
// *idempotency.ConfigError it panics with: a function wrapper has no form
// that returns its configuration error. Any other panic goes on.
func wrapFunc(name string, s store, opts []idempotency.Option) (fn func(context.Context, json.RawMessage) (json.RawMessage, error), err error) {
	defer func() {
		if r := recover(); r != nil {
			ce, ok := r.(*idempotency.ConfigError)
			if !ok {
				panic(r)
			}
			fn, err = nil, ce
		}
	}()
	return idempotency.WrapFunc(name, s, reach, opts...), nil
}

func handlerOf(h *idempotency.Handler) *built {
	return &built{
		deliver: func(ctx context.Context, event []byte) error {
			_, err := h.Invoke(ctx, event)
			return err
		},
		keyOf: h.KeyOf,
	}
}

// startsNamed reports whether f, which does not start, has no name and
// would start with one: its key starts with the deployed function's name,
// which a template does not know before it is deployed.
func (f Function) startsNamed(wrapper bool, name string, opts []idempotency.Option) bool {
	if f.Env[FunctionNameEnv].Value != "" {
		return false
	}
	env := map[string]string{FunctionNameEnv: "function"}
	for variable, s := range f.Env {
		if variable != FunctionNameEnv {
			env[variable] = s.Value
		}
	}
	_, err := build(wrapper, name, append(opts, idempotency.WithEnvironment(env), idempotency.WithLogger(discard)))
	return err == nil
}

// ErrNoPrefix is the error of a function that would start once it had a
// name, which a template does not know before it is deployed.
var ErrNoPrefix = errors.New("no key prefix: the key starts with the deployed function's name (" + FunctionNameEnv + "), which nothing gives")

// Records is the wrapper of f for a record that is looked up by its key
// rather than by an event: f's settings, but a handler's, keyed on the
// whole event without payload validation (see Wrapper.Meet).
func Records(f Function, now func() time.Time) (*Wrapper, error) {
	code := maps.Clone(f.Code)
	if code == nil {
		code = map[string]Setting{}
	}
	delete(code, "WrapFunc")
	delete(code, "PythonHandler")
	const byKey = "the record's key"
	code["EventKey"] = Setting{"", byKey}
	code["PayloadValidation"] = Setting{"", byKey}
	code["KeyRequired"] = Setting{"false", byKey}
	code["KeyPrefix"] = Setting{"record", byKey}
	return New(Function{Code: code, Env: f.Env}, now)
}

// explain adds to the library's *idempotency.ConfigError where the
// option or the variable that it names was given.
func (f Function) explain(err error) error {
	ce, ok := errors.AsType[*idempotency.ConfigError](err)
	if !ok {
		return err
	}
	s, ok := f.given(ce.Name)
	if ce.Name == "name" {
		s, ok = f.Code["WrapFunc"]
	}
	if !ok || s.Source == "" {
		return err
	}
	return fmt.Errorf("%w (%s)", err, s.Source)
}

// FromTemplate returns what the function fn of a template says of its
// settings: what its Metadata.Idempotency declares (an error there is a
// *DeclarationError), and its variables, Globals included, and its
// FunctionName.
func FromTemplate(fn *template.Function) (Function, error) {
	f := Function{Code: map[string]Setting{}, Env: map[string]Setting{}}
	declared, err := fn.Declared()
	if err != nil {
		return f, &DeclarationError{Source: "Metadata." + template.MetadataKey, Err: err}
	}
	for entry, value := range declared {
		f.Code[entry] = Setting{Value: value, Source: "Metadata." + template.MetadataKey + "." + entry}
	}
	for name, value := range fn.Env() {
		f.Env[name] = Setting{Value: value, Source: name + " in the template"}
	}
	if name, ok := fn.Name(); ok {
		f.Env[FunctionNameEnv] = Setting{Value: name, Source: "FunctionName in the template"}
	}
	return f, nil
}
