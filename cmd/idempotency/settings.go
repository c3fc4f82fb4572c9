package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/handler"
	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

const targetAbout = `The record is the one of --key, or of the event in EVENT_FILE ("-" for
standard input), whose key is computed as the function computes it, by
the library's own code, from the function's settings: those of its entry
in a SAM template (--template, --resource: its Environment, Globals
included, and Metadata.Idempotency), else those of this command's
environment (POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH and the others the
function reads, AWS_LAMBDA_FUNCTION_NAME), with the flags below on top.
The table is --table, else the function's POWERTOOLS_IDEMPOTENCY_TABLE
when it is a plain name.

` + storeAbout

// optString is a string flag that tells whether it was given: an empty
// key expression is a setting (the whole event), not the absence of one.
type optString struct {
	value string
	set   bool
}

func (o *optString) String() string { return o.value }

func (o *optString) Set(s string) error {
	o.value, o.set = s, true
	return nil
}

// target is the record a command is about, and the function whose record
// it is: the flags shared by inspect, forget and resolve.
type target struct {
	key          string
	where        storeFlags
	templatePath string
	resource     string
	functionName optString
	wrapFunc     optString
	eventKey     optString
	validation   optString
	keyPrefix    optString
	keyRequired  bool
	expiresAfter time.Duration
}

func (t *target) register(fs *flag.FlagSet) {
	fs.StringVar(&t.key, "key", "", "the record's `key` (\"prefix#hash\"), instead of an event")
	t.where.register(fs, "", "the DynamoDB `table` of the records (default: the function's POWERTOOLS_IDEMPOTENCY_TABLE)")
	fs.StringVar(&t.templatePath, "template", "", "the SAM `template` that defines the function")
	fs.StringVar(&t.resource, "resource", "", "the function's logical `ID` in --template")
	fs.Var(&t.functionName, "function-name", "the deployed function's `name` (AWS_LAMBDA_FUNCTION_NAME), the key prefix by default")
	fs.Var(&t.wrapFunc, "wrap-func", "the `name` given to idempotency.WrapFunc, when the key is taken from its argument: EVENT_FILE is then that argument's JSON")
	fs.Var(&t.eventKey, "event-key", "the key `expression` (WithEventKey; \"\" for the whole event)")
	fs.Var(&t.validation, "payload-validation", "the payload validation `expression` (WithPayloadValidation; \"\" for none)")
	fs.Var(&t.keyPrefix, "key-prefix", "the key `prefix` (WithKeyPrefix)")
	fs.BoolVar(&t.keyRequired, "key-required", false, "an event without a key is an error (WithKeyRequired)")
	fs.DurationVar(&t.expiresAfter, "expires-after", 0, "the record expiry (WithExpiresAfter); default: the function's, else 1h")
}

// function is what a key depends on: what the function's code sets, and
// its environment; settings resolves the two as the library does, for
// what the command shows and for the record expiry.
type function struct {
	code     template.Code
	env      map[string]string
	settings template.Settings
}

// function returns the function's settings and its table, from the
// template or the environment, and the flags.
func (t *target) function(environ func() []string) (*function, string, error) {
	f := &function{env: map[string]string{}}
	switch {
	case t.templatePath != "":
		if t.resource == "" {
			return nil, "", badInput(errors.New("--template needs --resource, the function's logical ID"))
		}
		tmpl, err := template.Read(t.templatePath)
		if err != nil {
			return nil, "", badInput(err)
		}
		fn := tmpl.Function(t.resource)
		if fn == nil {
			return nil, "", badInput(fmt.Errorf("%s: no function %q", t.templatePath, t.resource))
		}
		if f.code, err = fn.Code(); err != nil {
			return nil, "", badInput(fmt.Errorf("%s: %s: %w", t.templatePath, t.resource, err))
		}
		f.env = fn.Env()
	case t.resource != "":
		return nil, "", badInput(errors.New("--resource needs --template"))
	default:
		for _, kv := range environ() {
			if name, value, _ := strings.Cut(kv, "="); handler.Variable(name) {
				f.env[name] = value
			}
		}
	}
	if t.functionName.set {
		f.env[template.FunctionNameEnv] = t.functionName.value
	}
	if t.wrapFunc.set {
		f.code.WrapFunc = t.wrapFunc.value
	}
	for _, o := range []struct {
		flag *optString
		code **string
	}{{&t.eventKey, &f.code.EventKey}, {&t.validation, &f.code.PayloadValidation}, {&t.keyPrefix, &f.code.KeyPrefix}} {
		if o.flag.set {
			*o.code = &o.flag.value
		}
	}
	if t.keyRequired {
		f.code.KeyRequired = true
	}
	if t.expiresAfter != 0 {
		f.code.ExpiresAfter = t.expiresAfter
	}
	var err error
	if f.settings, err = template.Resolve(f.code, f.env); err != nil {
		return nil, "", fmt.Errorf("the function's settings: %w", err)
	}
	table := t.where.table
	if table == "" {
		table = f.env[template.TableEnv]
	}
	return f, table, nil
}

// subject is the record a command is about, resolved from its target.
type subject struct {
	store    recordStore
	settings template.Settings
	key      string
	// fromEvent reports that key was computed from an event, whose
	// payload hash is hash.
	fromEvent bool
	hash      string
}

// subject resolves t, with the EVENT_FILE in args when there is one, to
// a store and a key. The caller closes sub.store.
func (c *cli) subject(ctx context.Context, t *target, args []string) (sub *subject, err error) {
	if (t.key == "") == (len(args) == 0) {
		return nil, badInput(errors.New("give either --key or an EVENT_FILE"))
	}
	f, table, err := t.function(c.environ)
	if err != nil {
		return nil, err
	}
	store, err := c.open(ctx, &t.where, table)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			store.close()
		}
	}()
	sub = &subject{store: store, settings: f.settings, key: t.key}
	if t.key != "" {
		return sub, nil
	}
	event, err := c.readEvent(args[0])
	if err != nil {
		return nil, badInput(err)
	}
	sub.fromEvent = true
	if sub.key, sub.hash, err = keyOf(store, f, event); err != nil {
		return nil, err
	}
	if sub.key == "" {
		return nil, fmt.Errorf("the event has no key (%q selects nothing in it): the function runs it without idempotency, and keeps no record of it", f.settings.EventKey)
	}
	return sub, nil
}

// readEvent reads the event of EVENT_FILE, "-" for standard input.
func (c *cli) readEvent(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(c.stdin)
	}
	return os.ReadFile(name)
}

// keyOf computes the key and payload hash of event as the function f
// does, by its own code (see handler.New).
func keyOf(store idempotency.Store, f *function, event []byte) (key, hash string, err error) {
	if f.settings.KeyPrefix == "" {
		return "", "", badInput(errors.New("no key prefix: the key starts with the deployed function's name; give --function-name (or --key-prefix, when the function sets one)"))
	}
	h, err := handler.New(store, f.code, f.settings, f.env)
	if err != nil {
		return "", "", err
	}
	return h.KeyOf(event)
}
