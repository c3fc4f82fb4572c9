package idempotency

import (
	"cmp"
	"crypto"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync/atomic"
	"time"

	"github.com/gopowertools/lambda/internal/keyformat"
	"github.com/gopowertools/lambda/jmespath"
	"github.com/gopowertools/lambda/powertools/idempotency/internal/typedoor"
)

// wrapper is what a wrapper is built over, besides its store and
// options.
type wrapper struct {
	kind wrapperKind
	name string // a function wrapper's name, its key prefix
	// in and out are the wrapped function's argument and result types.
	in, out reflect.Type
}

// build resolves opts into an engine of the wrapper w, or returns the
// first problem as a *ConfigError. It is the one place that checks
// settings.
func build(store Store, w wrapper, opts []Option) (*engine, error) {
	o, err := resolve(opts, w.kind)
	if err != nil {
		return nil, err
	}
	// bad names the option or variable that gave a setting, for its error.
	bad := func(option string, err error) error {
		s, _ := o.isSet(option)
		return &ConfigError{Name: cmp.Or(s.name, option), Err: err}
	}
	switch {
	case o.replayOut != nil && o.replayOut != w.out:
		return nil, bad("WithReplayHook", fmt.Errorf("its function takes and returns %v, the wrapped function returns %v", o.replayOut, w.out))
	case o.reconcileOut != nil && o.reconcileOut != w.out:
		return nil, bad("WithReconcile", fmt.Errorf("its function returns %v, the wrapped function %v: every duplicate of an UNCERTAIN record would get a result it cannot decode", o.reconcileOut, w.out))
	case o.expiresAfter < time.Second:
		return nil, bad("WithExpiresAfter", errors.New("must be at least 1s"))
	case o.lease <= 0:
		return nil, bad("WithLease", errors.New("must be positive"))
	case o.abandon < AbandonRetry || o.abandon > AbandonUncertain:
		return nil, bad("WithAbandonPolicy", fmt.Errorf("unknown policy %d", int(o.abandon)))
	case o.leaseBeyond < 0:
		return nil, bad("WithLeaseBeyondDeadline", errors.New("must not be negative"))
	case o.cacheSize < 0:
		return nil, bad("WithLocalCache", errors.New("size must not be negative"))
	case o.decodeLimit <= 0 && o.given["WithDecodeLimit"] != source{}:
		return nil, bad("WithDecodeLimit", fmt.Errorf("%d is not above 0", o.decodeLimit))
	case o.compat < OwnFormat || o.compat > PowertoolsTypeScript:
		return nil, bad("WithCompatibility", fmt.Errorf("unknown %v", o.compat))
	case o.hash != 0 && !supportedHash(o.hash):
		return nil, bad("WithHash", fmt.Errorf("unsupported hash %v: want MD5, SHA1, SHA224, SHA256, SHA384 or SHA512", o.hash))
	}
	if s, ok := o.isSet("WithPythonHandler"); ok && s.level == levelCode {
		// Given outright where it cannot apply, it is a mistake; given in
		// WithDefaults, which the environment's mode may override, not.
		if o.compat != PowertoolsPython {
			return nil, bad("WithPythonHandler", fmt.Errorf("only for PowertoolsPython, and the compatibility is %v", o.compat))
		}
		if w.kind == funcKind {
			return nil, bad("WithPythonHandler", errors.New("a function wrapper's key prefix is <function>.<name>: name it with the Python function's <module>.<qualname>"))
		}
	}

	e := &engine{
		store:                store,
		keyRequired:          o.keyRequired,
		expiresAfter:         o.expiresAfter,
		leaseWithoutDeadline: o.lease,
		clock:                o.clock,
		logger:               o.logger,
		replayHook:           o.replayHook,
		useNumber:            o.useNumber,
		disallowUnknown:      o.disallowUnknown,
		reconciler:           o.reconcile,
		abandon:              o.abandon,
		wait:                 o.wait,
		leaseBeyond:          o.leaseBeyond,
		disabled:             o.disabled,
		cache:                newCache(o.cacheSize),
		keys:                 keyformat.Format{Mode: keyformat.Mode(o.compat), Hash: o.hash},
	}
	if e.clock == nil {
		e.clock = time.Now
	}
	e.invoker, _ = store.(Invoker)
	if _, former := store.(formerInvoker); former && e.invoker == nil {
		return nil, &ConfigError{Name: "store", Err: errors.New("it has a method NewInvocation, which idempotency.Invoker now names StageWrites: rename it, or the writes that the handler stages are never committed")}
	}
	if e.disabled {
		// Read here only, where it decides the warning; a value that is
		// not a boolean is refused as the library's own switches are.
		dev := false
		if v := o.getenv(envDev); v != "" {
			if dev, err = parseBool(v); err != nil {
				return nil, &ConfigError{Name: envDev, Err: err}
			}
		}
		warnDisabled(e.log(), dev)
	}

	if _, err := jmespath.Compile("@", o.jmespath...); err != nil {
		return nil, bad("WithJMESPath", err)
	}
	jopts := slices.Clone(o.jmespath)
	if len(o.functions) > 0 {
		jopts = append(jopts, jmespath.WithFunctions(o.functions...))
	}
	if o.decodeLimit != 0 {
		jopts = append(jopts, jmespath.WithDecodeLimit(o.decodeLimit))
	}
	compile := func(option, expr string) (*jmespath.Expression, error) {
		if expr == "" {
			return nil, nil
		}
		compiled, err := jmespath.Compile(expr, jopts...)
		if err != nil {
			return nil, bad(option, err)
		}
		return compiled, nil
	}
	if e.keyExpr, err = compile("WithEventKey", o.eventKey); err != nil {
		return nil, err
	}
	e.keyExpr = cmp.Or(e.keyExpr, wholeEvent)
	e.keyMulti = e.keyExpr.MultiSelect()
	if e.validation, err = compile("WithPayloadValidation", o.validation); err != nil {
		return nil, err
	}
	if e.former, err = compileFormer(o, jopts...); err != nil {
		return nil, bad("WithPayloadValidation", err)
	}
	e.exprs = []*jmespath.Expression{e.keyExpr}
	if e.validation != nil {
		e.exprs = append(e.exprs, e.validation)
	}
	if e.types, err = typedoor.Plan(typedoor.Wrapper{
		In: w.in, Function: w.kind == funcKind, Compat: o.compat != OwnFormat,
		Key: e.keyExpr, Validation: e.validation, JMESPath: jopts,
	}); err != nil {
		// A path that cannot be followed through the handler's type.
		xe := err.(*jmespath.ExpressionError)
		option := "WithEventKey"
		if xe.Expression == e.validation {
			option = "WithPayloadValidation"
		}
		return nil, bad(option, fmt.Errorf("%s: %w", xe.Expression, xe.Err))
	}
	if e.types != nil {
		e.exprs = append(e.exprs, e.types.Probes...)
	}

	// A disabled wrapper never builds a key, so a missing prefix only
	// matters once idempotency is on: local runs with
	// POWERTOOLS_IDEMPOTENCY_DISABLED need no function name.
	if e.prefix, err = keyPrefix(o, w); err != nil && !(e.disabled && errors.Is(err, errNoPrefix)) {
		return nil, err
	}
	if store == nil && !e.disabled {
		return nil, &ConfigError{Name: "store", Err: errors.New("store is nil")}
	}
	if !e.disabled {
		if e.observer, err = e.observers(o, bad); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// keyPrefix settles the part of the key before "#". A function wrapper's
// is "<function>.<name>", or name alone outside Lambda. A handler's is
// the one given outright or by the environment, else Powertools Python's
// "<function>.<handler>" in that mode, else the function's name. One
// given in WithDefaults gives way to the last two, which the environment
// makes, as every default gives way to the environment.
func keyPrefix(o *options, w wrapper) (string, error) {
	fn := o.getenv(envFunctionName)
	prefix, given := o.isSet("WithKeyPrefix")
	if w.kind == funcKind {
		if given {
			return "", &ConfigError{Name: "WithKeyPrefix", Err: errors.New("a function wrapper's key prefix is the Lambda function's name and its own")}
		}
		if w.name == "" {
			return "", &ConfigError{Name: "name", Err: errors.New("a function wrapper needs a name, its key prefix")}
		}
		// As Powertools does: two functions sharing a table and a
		// wrapper's name must not share its records.
		if fn != "" {
			return fn + "." + w.name, nil
		}
		return w.name, nil
	}
	fromEnv := fn != "" && (o.compat != PowertoolsPython || o.pythonHandler != "")
	switch {
	case given && o.keyPrefix == "":
		return "", &ConfigError{Name: prefix.name, Err: errors.New("prefix is empty")}
	case given && (prefix.level != levelDefault || !fromEnv):
		return o.keyPrefix, nil
	case o.compat == PowertoolsPython:
		handler, _ := o.isSet("WithPythonHandler")
		switch {
		case o.pythonHandler == "":
			return "", &ConfigError{Name: "WithPythonHandler", Err: fmt.Errorf("PowertoolsPython's key prefix is <function>.<handler>: give the handler with WithPythonHandler or %s, or the whole prefix with WithKeyPrefix: %w", envPythonHandler, errNoPrefix)}
		case fn == "":
			return "", &ConfigError{Name: handler.name, Err: fmt.Errorf("PowertoolsPython's key prefix is <function>.<handler>, and %s is not set: %w", envFunctionName, errNoPrefix)}
		}
		return fn + "." + o.pythonHandler, nil
	case fn != "":
		return fn, nil
	}
	return "", &ConfigError{Name: "WithKeyPrefix", Err: errNoPrefix}
}

// errNoPrefix explains how to give a handler its key prefix.
var errNoPrefix = errors.New("no key prefix: use WithKeyPrefix, or set " + envKeyPrefix + " or " + envFunctionName)

// disabledWarned makes the warning that idempotency is off once per process.
var disabledWarned atomic.Bool

// warnDisabled warns, once per process, that idempotency is off, unless
// POWERTOOLS_DEV (dev) marks a development environment: nothing should
// switch a payment function's protection off silently.
func warnDisabled(log *slog.Logger, dev bool) {
	if dev || !disabledWarned.CompareAndSwap(false, true) {
		return
	}
	log.Warn("idempotency: disabled (WithDisabled or "+envDisabled+"): handlers run on every event, duplicates included; meant for development, where "+envDev+" silences this warning", "variable", envDisabled)
}

// wholeEvent is the key expression when none is set: all of the event.
var wholeEvent = jmespath.MustCompile("@")

func supportedHash(h crypto.Hash) bool {
	for _, s := range hashNames {
		if h == s {
			return true
		}
	}
	return false
}
