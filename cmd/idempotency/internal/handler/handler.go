// Package handler builds the idempotent wrapper that a function's settings
// make, with powertools/idempotency's own code, over a store that never
// writes: to compute the keys the function computes, to find what a
// delivery of an event meets (Wrapper.Deliver), or to find that the
// function would not start.
//
// The settings come from what the function's code gives outright (its
// Metadata.Idempotency in a template, or the command's flags) and from its
// environment, and reach the library as options only: the command never
// changes its own process environment, which the library would otherwise
// read. Each setting keeps where it came from, for the operator to see.
package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
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
	// Metadata.Idempotency that declares it (see Entries): it wins over
	// the environment, as an option given in code does.
	Code map[string]Setting
	// Env is its environment, by variable name (see Variables); an empty
	// value is unset, as for the library.
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
	// WrapFunc (for a function wrapper), KeyPrefix, EventKey,
	// PayloadValidation, KeyRequired, ExpiresAfter, Compatibility, Hash,
	// PythonHandler (in PowertoolsPython's mode) and AbandonPolicy, then
	// the settings of the environment that are set: a disabled wrapper,
	// a wait for an invocation in progress, a lease beyond the deadline.
	Settings []Resolved
	// ExpiresAfter is the record expiry.
	ExpiresAfter time.Duration

	deliver func(ctx context.Context, event []byte) error
	// keyOf is the handler's KeyOf; nil for a function wrapper, whose
	// key is the one its store is asked for.
	keyOf func(event []byte) (key, hash string, err error)
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
// idempotency.NewFunc for a function wrapper (Code's WrapFunc), which
// reads its argument's JSON as an event; now is its clock.
//
// Its errors are a *DeclarationError for an entry of Code that cannot be
// read, and otherwise what keeps the function from starting: a
// *idempotency.ConfigError, for a value of its environment that the
// library would refuse as it refuses it, or the library's own.
//
// The library reads AWS_LAMBDA_FUNCTION_NAME from the process environment
// for a function wrapper's key prefix, with no option to give it: New
// refuses to build one when that variable differs from f's.
func New(f Function, now func() time.Time) (*Wrapper, error) {
	if err := checkEntries(f.Code); err != nil {
		return nil, err
	}
	r := &resolver{f: f, options: map[string]given{}}
	wrap, wrapper := f.Code["WrapFunc"]
	r.wrapper = wrapper
	if wrapper {
		r.show("WrapFunc", wrap.Value, wrap.Source)
	}
	w := &Wrapper{}
	r.str("EventKey", EventKeyEnv, "WithEventKey", true, idempotency.WithEventKey)
	r.str("PayloadValidation", ValidationEnv, "WithPayloadValidation", true, idempotency.WithPayloadValidation)
	if _, err := parse(r, "KeyRequired", "", "WithKeyRequired", false, readBool, idempotency.WithKeyRequired, "false", nil); err != nil {
		return nil, err
	}
	expires, err := parse(r, "ExpiresAfter", ExpiresAfterEnv, "WithExpiresAfter", false, readDuration, idempotency.WithExpiresAfter, defaultExpiresAfter.String(), idempotency.WithExpiresAfter(defaultExpiresAfter))
	if err != nil {
		return nil, err
	}
	w.ExpiresAfter = defaultExpiresAfter
	if expires != nil {
		w.ExpiresAfter = *expires
	}
	compat, err := parse(r, "Compatibility", CompatibilityEnv, "WithCompatibility", false, readCompatibility, idempotency.WithCompatibility, idempotency.OwnFormat.String(), idempotency.WithCompatibility(idempotency.OwnFormat))
	if err != nil {
		return nil, err
	}
	python := compat != nil && *compat == idempotency.PowertoolsPython
	defaultHash := "sha256"
	if compat != nil && *compat != idempotency.OwnFormat {
		defaultHash = "md5"
	}
	// 0: the mode's own default.
	if _, err := parse(r, "Hash", HashEnv, "WithHash", false, readHash, idempotency.WithHash, defaultHash, idempotency.WithHash(0)); err != nil {
		return nil, err
	}
	if _, err := parse(r, "AbandonPolicy", AbandonPolicyEnv, "WithAbandonPolicy", false, readAbandonPolicy, idempotency.WithAbandonPolicy, idempotency.AbandonRetry.String(), idempotency.WithAbandonPolicy(idempotency.AbandonRetry)); err != nil {
		return nil, err
	}
	// Settings of the environment only, shown when set.
	disabled, err := parse(r, "", DisabledEnv, "WithDisabled", false, readBool, idempotency.WithDisabled, "", idempotency.WithDisabled(false))
	if err != nil {
		return nil, err
	}
	r.disabled = disabled != nil && *disabled
	if _, err := parse(r, "", WaitEnv, "WithWaitForInProgress", false, readBool, idempotency.WithWaitForInProgress, "", nil); err != nil {
		return nil, err
	}
	if _, err := parse(r, "", LeaseBeyondEnv, "WithLeaseBeyondDeadline", false, readDuration, idempotency.WithLeaseBeyondDeadline, "", idempotency.WithLeaseBeyondDeadline(0)); err != nil {
		return nil, err
	}
	if err := r.telemetry(); err != nil {
		return nil, err
	}
	name, err := r.keyPrefix(wrap, python)
	if err != nil {
		return nil, err
	}
	// The probe's: a delivery that meets an invocation in progress is
	// told so at once, rather than waiting for it; what was told
	// goes to the delivery's probe.
	opts := append(r.opts,
		idempotency.WithWaitForInProgress(false),
		idempotency.WithLogger(discard),
		idempotency.WithClock(now),
		idempotency.WithObserver(observe),
	)
	var s store
	if wrapper {
		var fn func(context.Context, json.RawMessage) (json.RawMessage, error)
		if err := idempotencytest.ConfigError(func() { fn = idempotency.WrapFunc(name, s, reach, opts...) }); err != nil {
			return nil, r.explain(err)
		}
		w.deliver = func(ctx context.Context, event []byte) error {
			_, err := fn(ctx, event)
			return err
		}
	} else {
		h, err := idempotency.New(s, reach, opts...)
		if err != nil {
			return nil, r.explain(err)
		}
		w.deliver = func(ctx context.Context, event []byte) error {
			_, err := h.Invoke(ctx, event)
			return err
		}
		w.keyOf = h.KeyOf
	}
	w.Settings = r.ordered()
	return w, nil
}

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

// telemetry resolves the metrics and the outcome log, which a probe
// writes nowhere, so that their settings are checked as the function
// checks them.
func (r *resolver) telemetry() error {
	var metrics io.Writer
	off := false
	if s, variable, ok := r.lookup("", MetricsDisabledEnv, false); ok {
		v, err := readBool(s.Value)
		if err != nil {
			return badValue(s, variable, err)
		}
		off = v
	}
	if s, variable, ok := r.lookup("", MetricsEnv, true); ok && !off {
		on, err := readBool(s.Value)
		if err != nil {
			return badValue(s, variable, err)
		}
		if on {
			metrics = io.Discard
		}
	}
	r.opts = append(r.opts, idempotency.WithMetrics(metrics))
	if s, variable, ok := r.lookup("", MetricsNamespaceEnv, false); ok {
		r.give("WithMetricsNamespace", s, variable, idempotency.WithMetricsNamespace(s.Value))
	} else {
		r.opts = append(r.opts, idempotency.WithMetricsNamespace(defaultMetricsNamespace))
	}
	_, err := parse(r, "", OutcomeLogEnv, "WithOutcomeLog", true, readBool, idempotency.WithOutcomeLog, "", idempotency.WithOutcomeLog(false))
	return err
}

// explain names, in a *idempotency.ConfigError of the library, the
// variable or the entry that gave the option it names, rather than the
// option the command gave.
func (r *resolver) explain(err error) error {
	ce, ok := errors.AsType[*idempotency.ConfigError](err)
	if !ok {
		return err
	}
	g, ok := r.options[ce.Name]
	switch {
	case !ok || g.Source == "":
		return err
	case g.variable != "":
		return fmt.Errorf("%w (%s)", &idempotency.ConfigError{Name: g.variable, Err: ce.Err}, g.Source)
	}
	return fmt.Errorf("%w (%s)", err, g.Source)
}

// reach is the probe's handler: it runs nothing, and says that a delivery
// reached it.
func reach(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, errRuns }

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
		if slices.Contains(Variables, name) {
			f.Env[name] = Setting{Value: value, Source: name + " in the template"}
		}
	}
	if name, ok := fn.Name(); ok {
		f.Env[FunctionNameEnv] = Setting{Value: name, Source: "FunctionName in the template"}
	}
	return f, nil
}
