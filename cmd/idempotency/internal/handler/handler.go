// Package handler builds the idempotent handler that a function's
// settings make, with powertools/idempotency's own code: to compute the
// keys the function computes, or to find that it would not start.
package handler

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// New returns the handler of a function whose code gives the options code
// and whose environment is env, built by idempotency.New in that
// environment, which it reads as it does in Lambda: the key paths, the key
// prefix, and whatever else it reads (an abandon policy, a compatibility
// mode). s is what template.Resolve made of the two.
//
// A function wrapper's handler has the wrapper's prefix and paths, and
// reads its argument's JSON as an event, more strictly than a wrapper
// reads it: an argument that json.Marshal wrote always passes.
//
// The handler is never invoked; store is only what idempotency.New
// checks. New changes the process environment while it runs (see
// inEnvironment): call it before starting goroutines that read it.
func New(store idempotency.Store, code template.Code, s template.Settings, env map[string]string) (*idempotency.Handler, error) {
	// POWERTOOLS_IDEMPOTENCY_DISABLED is read as the function reads it: a
	// disabled handler still computes keys.
	opts := []idempotency.Option{
		idempotency.WithLogger(slog.New(slog.DiscardHandler)),
		idempotency.WithKeyRequired(code.KeyRequired),
	}
	if s.WrapFunc != "" {
		// A wrapper reads no key setting from its environment.
		code.EventKey, code.PayloadValidation, code.KeyPrefix = &s.EventKey, &s.PayloadValidation, &s.KeyPrefix
	}
	if code.EventKey != nil {
		opts = append(opts, idempotency.WithEventKey(*code.EventKey))
	}
	if code.PayloadValidation != nil {
		opts = append(opts, idempotency.WithPayloadValidation(*code.PayloadValidation))
	}
	if code.KeyPrefix != nil {
		opts = append(opts, idempotency.WithKeyPrefix(*code.KeyPrefix))
	}
	if code.ExpiresAfter != 0 {
		opts = append(opts, idempotency.WithExpiresAfter(code.ExpiresAfter))
	}
	var h *idempotency.Handler
	var err error
	inEnvironment(env, func() {
		h, err = idempotency.New(store, func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return nil, errors.New("idempotency: the command never runs the handler")
		}, opts...)
	})
	return h, err
}

// Variable reports whether the environment variable name is one that
// idempotency.New may read: POWERTOOLS_* and the function's name.
func Variable(name string) bool {
	return strings.HasPrefix(name, "POWERTOOLS_") || name == template.FunctionNameEnv
}

// inEnvironment runs fn with the variables of the process that the
// library reads (Variable) replaced by those of env, and puts them back
// after. The environment is the process's: the command calls it before
// it starts any goroutine of its own.
func inEnvironment(env map[string]string, fn func()) {
	saved := map[string]string{}
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if Variable(name) {
			saved[name] = value
			os.Unsetenv(name)
		}
	}
	for name, value := range env {
		if Variable(name) {
			os.Setenv(name, value)
		}
	}
	defer func() {
		for name := range env {
			os.Unsetenv(name)
		}
		for name, value := range saved {
			os.Setenv(name, value)
		}
	}()
	fn()
}
