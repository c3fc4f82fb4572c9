package handler

import (
	"crypto"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
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

// entry is an entry of Metadata.Idempotency: what a function's code gives
// outright with the option "With" + name, read from the entry's value.
type entry struct {
	name   string
	option func(value string) (idempotency.Option, error)
}

// entries are the entries of Metadata.Idempotency, in the order that
// Wrapper.Settings shows them. They are everything a function's code can
// set that changes its keys, or what a delivery meets; the command's
// flags are the same settings, in kebab case (--event-key). WrapFunc is
// the name given to idempotency.WrapFunc, not an option.
var entries = []entry{
	{"WrapFunc", nil},
	{"KeyPrefix", text(idempotency.WithKeyPrefix)},
	{"EventKey", text(idempotency.WithEventKey)},
	{"PayloadValidation", text(idempotency.WithPayloadValidation)},
	{"KeyRequired", read(readBool, idempotency.WithKeyRequired)},
	{"ExpiresAfter", read(readDuration, idempotency.WithExpiresAfter)},
	{"Compatibility", read(readCompatibility, idempotency.WithCompatibility)},
	{"Hash", read(readHash, idempotency.WithHash)},
	{"PythonHandler", text(idempotency.WithPythonHandler)},
	{"AbandonPolicy", read(readAbandonPolicy, idempotency.WithAbandonPolicy)},
}

func text(opt func(string) idempotency.Option) func(string) (idempotency.Option, error) {
	return func(v string) (idempotency.Option, error) { return opt(v), nil }
}

func read[T any](parse func(string) (T, error), opt func(T) idempotency.Option) func(string) (idempotency.Option, error) {
	return func(v string) (idempotency.Option, error) {
		x, err := parse(v)
		if err != nil {
			return nil, err
		}
		return opt(x), nil
	}
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
		if !slices.ContainsFunc(entries, func(e entry) bool { return e.name == name }) {
			names := make([]string, len(entries))
			for i, e := range entries {
				names[i] = e.name
			}
			return nil, &DeclarationError{Source: s.Source, Err: fmt.Errorf("no such setting %q (the entries of Metadata.%s: %s)", name, template.MetadataKey, strings.Join(names, ", "))}
		}
	}
	var opts []idempotency.Option
	for _, e := range entries {
		s, ok := f.Code[e.name]
		if !ok || e.option == nil {
			continue
		}
		opt, err := e.option(s.Value)
		if err != nil {
			return nil, &DeclarationError{Source: s.Source, Err: err}
		}
		opts = append(opts, opt)
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
// function that sets none; TestDefaults checks it against the library.
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
	mode, _ := readCompatibility(compat.Value) // the library read it so
	hash := "sha256"
	if mode != idempotency.OwnFormat {
		hash = "md5"
	}
	var shown []Resolved
	show := func(name string, s Setting) { shown = append(shown, Resolved{name, s}) }
	if wrapper {
		show("WrapFunc", f.Code["WrapFunc"])
	}
	handler, python := from("WithPythonHandler")
	python = python && mode == idempotency.PowertoolsPython
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

// The readers of the entries' values, with the spellings of the library's
// variables.

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
	for _, c := range []idempotency.Compatibility{idempotency.OwnFormat, idempotency.PowertoolsPython, idempotency.PowertoolsTypeScript} {
		if strings.EqualFold(v, c.String()) {
			return c, nil
		}
	}
	return 0, fmt.Errorf("%q is not own, python or typescript", v)
}

// hashes are the hashes idempotency.WithHash accepts, by the names of
// Python's hashlib and Node's crypto.
var hashes = map[string]crypto.Hash{
	"md5": crypto.MD5, "sha1": crypto.SHA1, "sha224": crypto.SHA224,
	"sha256": crypto.SHA256, "sha384": crypto.SHA384, "sha512": crypto.SHA512,
}

func readHash(v string) (crypto.Hash, error) {
	if h, ok := hashes[strings.ToLower(v)]; ok {
		return h, nil
	}
	return 0, fmt.Errorf("%q is not md5, sha1, sha224, sha256, sha384 or sha512", v)
}

func readAbandonPolicy(v string) (idempotency.AbandonPolicy, error) {
	for _, p := range []idempotency.AbandonPolicy{idempotency.AbandonRetry, idempotency.AbandonBlock, idempotency.AbandonUncertain} {
		if strings.EqualFold(v, p.String()) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%q is not retry, block or uncertain", v)
}
