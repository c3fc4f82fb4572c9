package idempotency

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/gopowertools/lambda/jmespath"
)

// Defaults for the settings that have no environment variable or whose
// variable is unset.
const (
	defaultExpiresAfter = time.Hour
	defaultLease        = time.Minute
)

// wrapperKind tells build which defaults apply: a handler reads the
// event-shaped environment variables, a function wrapper does not, because
// its argument is not the event.
type wrapperKind int

const (
	handlerKind wrapperKind = iota
	funcKind
)

// build resolves opts against the environment and the defaults into an
// engine, or returns the first problem as a *ConfigError. name is the
// function wrapper's name, the key prefix of a funcKind; out is the
// wrapped function's result type.
func build(store Store, kind wrapperKind, name string, out reflect.Type, opts []Option) (*engine, error) {
	o, d := resolveOptions(opts)
	if o.replayOut != nil && o.replayOut != out {
		return nil, &ConfigError{Name: "WithReplayHook", Err: fmt.Errorf("its function takes and returns %v, the wrapped function returns %v", o.replayOut, out)}
	}
	if o.reconcileOut != nil && o.reconcileOut != out {
		return nil, &ConfigError{Name: "WithReconcile", Err: fmt.Errorf("its function returns %v, the wrapped function %v: every duplicate of an UNCERTAIN record would get a result it cannot decode", o.reconcileOut, out)}
	}
	e := &engine{
		store:           store,
		keyRequired:     o.keyRequired,
		expiresAfter:    defaultExpiresAfter,
		lease:           defaultLease,
		now:             time.Now,
		logger:          o.logger,
		replayHook:      o.replayHook,
		observer:        o.observer,
		useNumber:       o.useNumber,
		disallowUnknown: o.disallowUnknown,
		reconcile:       o.reconcile,
	}
	if o.clock != nil {
		e.now = o.clock
	}

	if o.disabled != nil {
		e.disabled = *o.disabled
	} else if v, set, err := envBool(envDisabled); err != nil {
		return nil, err
	} else if set {
		e.disabled = v
	} else if d.disabled != nil {
		e.disabled = *d.disabled
	}
	if e.disabled {
		warnDisabled(e.log())
	}

	if o.expiresAfter != nil {
		if *o.expiresAfter < time.Second {
			return nil, &ConfigError{Name: "WithExpiresAfter", Err: errors.New("must be at least 1s")}
		}
		e.expiresAfter = *o.expiresAfter
	} else if v, set, err := envDuration(envExpiresAfter); err != nil {
		return nil, err
	} else if set {
		if v < time.Second {
			return nil, &ConfigError{Name: envExpiresAfter, Err: errors.New("must be at least 1s")}
		}
		e.expiresAfter = v
	} else if d.expiresAfter != nil {
		if *d.expiresAfter < time.Second {
			return nil, &ConfigError{Name: "WithExpiresAfter", Err: errors.New("must be at least 1s")}
		}
		e.expiresAfter = *d.expiresAfter
	}

	if o.lease != nil {
		if *o.lease <= 0 {
			return nil, &ConfigError{Name: "WithLease", Err: errors.New("must be positive")}
		}
		e.lease = *o.lease
	}

	if err := e.resolveInProgress(o, d); err != nil {
		return nil, err
	}

	if o.cacheSize < 0 {
		return nil, &ConfigError{Name: "WithLocalCache", Err: errors.New("size must not be negative")}
	}
	e.cache = newCache(o.cacheSize)
	e.invoker, _ = store.(Invoker)

	var jopts []jmespath.Option
	if len(o.functions) > 0 {
		jopts = append(jopts, jmespath.WithFunctions(o.functions...))
	}
	if limit := cmp.Or(o.decodeLimit, d.decodeLimit); limit != 0 {
		if limit < 0 {
			return nil, &ConfigError{Name: "WithDecodeLimit", Err: fmt.Errorf("%d is not above 0", limit)}
		}
		jopts = append(jopts, jmespath.WithDecodeLimit(limit))
	}
	var err error
	if e.keyExpr, err = compileSetting(o.eventKey, d.eventKey, "WithEventKey", envEventKey, kind, jopts); err != nil {
		return nil, err
	}
	if e.keyExpr == nil {
		e.keyExpr = wholeEvent
	}
	e.keyMulti = e.keyExpr.MultiSelect()
	if e.validation, err = compileSetting(o.validation, d.validation, "WithPayloadValidation", envValidation, kind, jopts); err != nil {
		return nil, err
	}
	e.exprs = []*jmespath.Expression{e.keyExpr}
	if e.validation != nil {
		e.exprs = append(e.exprs, e.validation)
	}

	// A disabled handler never builds a key, so a missing prefix only
	// matters once idempotency is on: local runs with
	// POWERTOOLS_IDEMPOTENCY_DISABLED need no function name.
	pythonPrefix, err := e.resolveCompatibility(o, d, kind)
	if err != nil && !(e.disabled && errors.Is(err, errNoPrefix)) {
		return nil, err
	}
	if e.prefix, err = keyPrefix(o.keyPrefix, cmp.Or(d.keyPrefix, pythonPrefix), kind, name); err != nil && !(e.disabled && errors.Is(err, errNoPrefix)) {
		return nil, err
	}
	if store == nil && !e.disabled {
		return nil, &ConfigError{Name: "store", Err: errors.New("store is nil")}
	}
	if _, ok := store.(UncertainStore); e.reconcile != nil && !ok && !e.disabled {
		return nil, &ConfigError{Name: "WithReconcile", Err: errors.New("the store cannot take over an UNCERTAIN record: it does not implement UncertainStore")}
	}
	if err := e.instrument(kind, o.telemetry, d.telemetry); err != nil {
		return nil, err
	}
	return e, nil
}

// resolveOptions applies opts: first the settings given to WithDefaults,
// then the others, which win. It returns, apart in d, the defaults of the
// settings that have an environment variable, since the variable comes
// between the two: code given outright, then the environment, then the
// defaults, then the built-in default.
func resolveOptions(opts []Option) (o, d options) {
	var scan options
	for _, opt := range opts {
		if opt != nil {
			opt(&scan)
		}
	}
	for _, opt := range scan.defaults {
		if opt != nil {
			opt(&o)
		}
	}
	d.eventKey, d.validation, d.keyPrefix, d.expiresAfter, d.disabled = o.eventKey, o.validation, o.keyPrefix, o.expiresAfter, o.disabled
	o.eventKey, o.validation, o.keyPrefix, o.expiresAfter, o.disabled = nil, nil, nil, nil, nil
	d.telemetry, o.telemetry = o.telemetry, telemetryOptions{}
	d.compat, o.compat = o.compat, compatOptions{}
	d.abandon, d.wait, d.leaseBeyond = o.abandon, o.wait, o.leaseBeyond
	o.abandon, o.wait, o.leaseBeyond = nil, nil, nil
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o, d
}

// disabledWarned makes the warning that idempotency is off once per process.
var disabledWarned atomic.Bool

// warnDisabled warns, once per process, that idempotency is off, unless
// POWERTOOLS_DEV marks a development environment: nothing should switch a
// payment function's protection off silently.
func warnDisabled(log *slog.Logger) {
	if dev, _, _ := envBool(envDev); dev || !disabledWarned.CompareAndSwap(false, true) {
		return
	}
	log.Warn("idempotency: disabled (WithDisabled or "+envDisabled+"): handlers run on every event, duplicates included; meant for development, where "+envDev+" silences this warning", "variable", envDisabled)
}

// wholeEvent is the key expression when none is set: all of the event.
var wholeEvent = jmespath.MustCompile("@")

// compileSetting compiles the expression set in code, else the one in the
// environment variable (handlers only). Nil means the setting is off.
func compileSetting(code, fallback *string, option, variable string, kind wrapperKind, opts []jmespath.Option) (*jmespath.Expression, error) {
	expr, name := "", option
	env, set := envString(variable)
	switch {
	case code != nil:
		expr = *code
	case kind == handlerKind && set:
		expr, name = env, variable
	case fallback != nil:
		expr = *fallback
	}
	if expr == "" {
		return nil, nil
	}
	compiled, err := jmespath.Compile(expr, opts...)
	if err != nil {
		return nil, &ConfigError{Name: name, Err: err}
	}
	return compiled, nil
}

// keyPrefix resolves the prefix: a function wrapper's name, or for a
// handler the option, the variable, or the function name, in that order.
func keyPrefix(code, fallback *string, kind wrapperKind, name string) (string, error) {
	if kind == funcKind {
		if code != nil || fallback != nil {
			return "", &ConfigError{Name: "WithKeyPrefix", Err: errors.New("a function wrapper's key prefix is the Lambda function's name and its own")}
		}
		if name == "" {
			return "", &ConfigError{Name: "name", Err: errors.New("a function wrapper needs a name, its key prefix")}
		}
		// As Powertools does: two functions sharing a table and a
		// wrapper's name must not share its records.
		if fn, ok := envString(envFunctionName); ok {
			return fn + "." + name, nil
		}
		return name, nil
	}
	if code != nil {
		if *code == "" {
			return "", &ConfigError{Name: "WithKeyPrefix", Err: errors.New("prefix is empty")}
		}
		return *code, nil
	}
	if p, ok := envString(envKeyPrefix); ok {
		return p, nil
	}
	if fallback != nil {
		return keyPrefix(fallback, nil, kind, name)
	}
	if p, ok := envString(envFunctionName); ok {
		return p, nil
	}
	return "", &ConfigError{Name: "WithKeyPrefix", Err: errNoPrefix}
}
