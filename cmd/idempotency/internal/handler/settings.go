package handler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
	"github.com/gopowertools/lambda/internal/settingsource"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Variables of the library that the command names in what it tells the
// operator.
const (
	DisabledEnv     = "POWERTOOLS_IDEMPOTENCY_DISABLED"
	EventKeyEnv     = "POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH"
	ValidationEnv   = "POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH"
	ExpiresAfterEnv = "POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER"
	FunctionNameEnv = template.FunctionNameEnv
)

// entries are the entries of Metadata.Idempotency, in the order that
// Wrapper.Settings shows them: each what a function's code gives outright
// with the option "With" + entry, its value spelled as the library's
// variable spells it (settingsource.Parse reads it). They are everything a
// function's code can set that changes its keys, or what a delivery meets;
// the command's flags are the same settings, in kebab case (--event-key).
// WrapFunc is the name given to idempotency.WrapFunc, not an option.
var entries = []string{
	"WrapFunc", "KeyPrefix", "EventKey", "PayloadValidation", "KeyRequired",
	"ExpiresAfter", "Compatibility", "Hash", "PythonHandler", "AbandonPolicy",
}

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

// options returns what f's code gives outright, each entry read into its
// option, then f's environment, which the library reads instead of the
// process's.
func (f Function) options() ([]idempotency.Option, error) {
	for name, s := range f.Code {
		if !slices.Contains(entries, name) {
			return nil, &DeclarationError{Source: s.Source, Err: fmt.Errorf("no such setting %q (the entries of Metadata.%s: %s)", name, template.MetadataKey, strings.Join(entries, ", "))}
		}
	}
	var opts []idempotency.Option
	for _, name := range entries {
		s, ok := f.Code[name]
		if !ok || name == "WrapFunc" {
			continue
		}
		opt, err := settingsource.Parse("With"+name, s.Value)
		if err != nil {
			return nil, &DeclarationError{Source: s.Source, Err: err}
		}
		opts = append(opts, opt.(idempotency.Option))
	}
	env := make(map[string]string, len(f.Env))
	for name, s := range f.Env {
		env[name] = s.Value
	}
	// Clipped: each caller appends options of its own.
	return slices.Clip(append(opts, idempotency.WithEnvironment(env))), nil
}

// given returns the setting that src gave, as the library names who gave
// an option: one of f's variables, or the option that an entry of f's
// code gave.
func (f Function) given(src string) (Setting, bool) {
	if entry, ok := strings.CutPrefix(src, "With"); ok {
		s, ok := f.Code[entry]
		return s, ok
	}
	s, ok := f.Env[src]
	return s, ok
}

// DefaultSource is the source of a setting that nothing gives.
const DefaultSource = "the library's default"

// defaultExpiresAfter is the library's record expiry, shown for a
// function that sets none; a test checks it against the library.
const defaultExpiresAfter = time.Hour

// settings returns the settings that Wrapper.Settings shows: each entry's
// and, when the environment gives them, the settings of the environment
// only. sources is the library's answer to who gave each option
// (settingsource.Of); a setting that nothing gives shows the library's
// default.
func (f Function) settings(sources map[string]string, wrapper bool) []Resolved {
	from := func(option string) (Setting, bool) {
		if src, ok := sources[option]; ok {
			return f.given(src)
		}
		return Setting{}, false
	}
	setting := func(name, def string) Setting {
		if s, ok := from("With" + name); ok {
			return s
		}
		return Setting{def, DefaultSource}
	}
	compat := setting("Compatibility", idempotency.OwnFormat.String())
	// The library has read the mode's text, in any case.
	python := strings.EqualFold(compat.Value, idempotency.PowertoolsPython.String())
	hash := "md5"
	if strings.EqualFold(compat.Value, idempotency.OwnFormat.String()) {
		hash = "sha256"
	}
	var shown []Resolved
	show := func(name string, s Setting) { shown = append(shown, Resolved{name, s}) }
	if wrapper {
		show("WrapFunc", f.Code["WrapFunc"])
	}
	handler, given := from("WithPythonHandler")
	python = python && given
	if s, ok := from("WithKeyPrefix"); ok {
		show("KeyPrefix", s)
	} else if s, ok := f.prefixSource(wrapper, handler, python); ok {
		show("KeyPrefix", s)
	}
	show("EventKey", setting("EventKey", ""))
	show("PayloadValidation", setting("PayloadValidation", ""))
	show("KeyRequired", setting("KeyRequired", "false"))
	show("ExpiresAfter", setting("ExpiresAfter", defaultExpiresAfter.String()))
	show("Compatibility", compat)
	show("Hash", setting("Hash", hash))
	if python {
		show("PythonHandler", handler)
	}
	show("AbandonPolicy", setting("AbandonPolicy", idempotency.AbandonRetry.String()))
	for _, option := range []string{"WithDisabled", "WithWaitForInProgress", "WithLeaseBeyondDeadline"} {
		if variable := sources[option]; f.Env[variable].Source != "" {
			show(variable, f.Env[variable])
		}
	}
	return shown
}

// prefixSource is the KeyPrefix of Wrapper.Settings when nothing gives
// one: no value, which the key shows, and the sources of what the library
// makes it of (WithKeyPrefix's documentation says how); false when
// nothing does, as for a disabled handler without a name.
func (f Function) prefixSource(wrapper bool, handler Setting, python bool) (Setting, bool) {
	fn := f.Env[FunctionNameEnv]
	named := fn.Value != ""
	wrap := f.Code["WrapFunc"]
	switch {
	case wrapper && named:
		return Setting{"", fmt.Sprintf("<function>.<WrapFunc>: %s from %s, WrapFunc from %s", FunctionNameEnv, fn.Source, wrap.Source)}, true
	case wrapper:
		return Setting{"", wrap.Source}, true
	case python && named:
		return Setting{"", fmt.Sprintf("<function>.<handler>: %s from %s, PythonHandler from %s", FunctionNameEnv, fn.Source, handler.Source)}, true
	case named:
		return Setting{"", fn.Source}, true
	}
	return Setting{}, false
}
