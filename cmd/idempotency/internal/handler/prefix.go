package handler

import (
	"fmt"
	"os"
	"strings"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// keyPrefix resolves the key prefix as the library does, and gives it
// outright; for a function wrapper, it returns the name to give NewFunc.
func (r *resolver) keyPrefix(wrap Setting, python bool) (string, error) {
	fn, fnSet := r.f.Env[FunctionNameEnv]
	fnSet = fnSet && fn.Value != ""
	codePrefix, codeSet := r.f.Code["KeyPrefix"]
	handler, handlerSet := r.f.Code["PythonHandler"]
	if codeSet {
		// A function wrapper refuses it, as the library does.
		r.give("WithKeyPrefix", codePrefix, "", idempotency.WithKeyPrefix(codePrefix.Value))
	}
	if handlerSet {
		// Refused outside PowertoolsPython's mode, and by a function
		// wrapper, as the library does.
		r.give("WithPythonHandler", handler, "", idempotency.WithPythonHandler(handler.Value))
	}
	if r.wrapper {
		// NewFunc's prefix is "<AWS_LAMBDA_FUNCTION_NAME>.<name>", the
		// variable read from the process environment, or name alone.
		name := wrap.Value
		process := os.Getenv(FunctionNameEnv)
		switch {
		case process != "" && process != fn.Value:
			return "", fmt.Errorf("this command's own environment has %s=%q, and the function's name is %q: a function wrapper's key prefix takes the name from the process environment, which the command does not change; unset it, or give the same name", FunctionNameEnv, process, fn.Value)
		case process == "" && fnSet:
			name = fn.Value + "." + name
		}
		source := wrap.Source
		if fnSet {
			source = fmt.Sprintf("<function>.<WrapFunc>: %s from %s, WrapFunc from %s", FunctionNameEnv, fn.Source, wrap.Source)
		}
		if !codeSet {
			r.show("KeyPrefix", strings.TrimPrefix(fn.Value+"."+wrap.Value, "."), source)
		}
		return name, nil
	}
	env, envSet := r.f.Env[KeyPrefixEnv]
	switch {
	case codeSet:
		r.show("KeyPrefix", codePrefix.Value, codePrefix.Source)
	case envSet && env.Value != "":
		r.give("WithKeyPrefix", env, KeyPrefixEnv, idempotency.WithKeyPrefix(env.Value))
		r.show("KeyPrefix", env.Value, env.Source)
	case python:
		// "<function>.<handler>", the handler given in code, else by its
		// variable. Without one, the library's own error says what to
		// give.
		option := "WithPythonHandler"
		if !handlerSet {
			handler, handlerSet = r.f.Env[PythonHandlerEnv]
			handlerSet = handlerSet && handler.Value != ""
			option = PythonHandlerEnv
			if handlerSet {
				r.give("WithPythonHandler", handler, PythonHandlerEnv, idempotency.WithPythonHandler(handler.Value))
			}
		}
		// Without the handler or the name, the library would read the
		// process environment's (the key prefix first): the errors are
		// its own, made here.
		switch {
		case handlerSet && fnSet:
			r.show("PythonHandler", handler.Value, handler.Source)
			prefix := fn.Value + "." + handler.Value
			r.give("WithKeyPrefix", Setting{prefix, ""}, "", idempotency.WithKeyPrefix(prefix))
			r.show("KeyPrefix", prefix, fmt.Sprintf("<function>.<handler>: %s from %s, PythonHandler from %s", FunctionNameEnv, fn.Source, handler.Source))
		case r.disabled:
			// A disabled handler keys nothing, and needs no prefix.
		case handlerSet:
			return "", &idempotency.ConfigError{Name: option, Err: fmt.Errorf("PowertoolsPython's key prefix is <function>.<handler>, and %s is not set: %w", FunctionNameEnv, ErrNoPrefix)}
		default:
			return "", &idempotency.ConfigError{Name: "WithPythonHandler", Err: fmt.Errorf("PowertoolsPython's key prefix is <function>.<handler>: give the handler with WithPythonHandler or %s, or the whole prefix with WithKeyPrefix", PythonHandlerEnv)}
		}
	case fnSet:
		r.give("WithKeyPrefix", fn, FunctionNameEnv, idempotency.WithKeyPrefix(fn.Value))
		r.show("KeyPrefix", fn.Value, fn.Source)
	case !r.disabled:
		// A disabled handler keys nothing, and needs no prefix.
		return "", ErrNoPrefix
	}
	return "", nil
}
