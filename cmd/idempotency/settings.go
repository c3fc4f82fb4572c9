package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"time"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/handler"
	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/redis"
	"gopkg.in/yaml.v3"
)

const targetAbout = `The record is the one of --key, or of the event in EVENT_FILE ("-" for
standard input), whose key is computed as the function computes it, by
the library's own code, from the function's settings, each shown with
where it was read. They come from, first to last:

  - the flags below, which stand for what the function's code gives;
  - with --template and --resource, the function's Metadata.Idempotency,
    which declares what its code gives outright, then its
    Environment.Variables (Globals included) and FunctionName;
  - this command's own environment (POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH,
    POWERTOOLS_IDEMPOTENCY_COMPATIBILITY and every other variable the
    library reads, AWS_LAMBDA_FUNCTION_NAME), as if it were the function's,
    for the variables the template does not set.

What a delivery of the event meets ("next delivery") is the answer of the
library's own handler, built with those settings, over a store that holds
the record and never writes. The table is --table, else the function's
POWERTOOLS_IDEMPOTENCY_TABLE when the template gives it as a plain name,
else this command's POWERTOOLS_IDEMPOTENCY_TABLE. A function whose template
names a Redis server (REDIS_URL) and no table keeps its records there: the
store is then Redis, at --redis-url, else the template's REDIS_URL when it
is a plain value, else this command's REDIS_URL.

What the command cannot see is the function's code. Settings given in
code are declared in Metadata.Idempotency, or given as flags. The
handler's input type is unknown: an event that does not decode into it
gets *idempotency.UndecodableEventError instead of running the handler,
which the answer says when it would change it. A configuration that the
function's code refuses when its handler is built, for its types, is
refused there, not here.

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

// codeFlags are the flags of the settings a function's code gives, one
// per entry of Metadata.Idempotency but KeyRequired, which is a switch.
var codeFlags = []struct{ entry, name, usage string }{
	{"WrapFunc", "wrap-func", "the `name` given to idempotency.WrapFunc, when the key is taken from its argument: EVENT_FILE is then that argument's JSON"},
	{"EventKey", "event-key", "the key `expression` (WithEventKey; \"\" for the whole event)"},
	{"PayloadValidation", "payload-validation", "the payload validation `expression` (WithPayloadValidation; \"\" for none)"},
	{"KeyPrefix", "key-prefix", "the key `prefix` (WithKeyPrefix)"},
	{"ExpiresAfter", "expires-after", "the record `expiry`, a Go duration (WithExpiresAfter)"},
	{"Compatibility", "compatibility", "the key and record `format`: own, python or typescript (WithCompatibility)"},
	{"Hash", "hash", "the `hash` of keys: md5, sha1, sha224, sha256, sha384 or sha512 (WithHash)"},
	{"PythonHandler", "python-handler", "in python's format, the Python handler's `module.name`, as in the key prefix <function>.<module.name> (WithPythonHandler)"},
	{"AbandonPolicy", "abandon-policy", "what becomes of a key whose invocation ended without completing: retry, block or uncertain (WithAbandonPolicy)"},
}

// target is the record a command is about, and the function whose record
// it is: the flags shared by inspect, forget and resolve.
type target struct {
	key          string
	where        storeFlags
	templatePath string
	resource     string
	functionName optString
	code         map[string]*optString // by entry
	keyRequired  bool
}

func (t *target) register(fs *flag.FlagSet) {
	fs.StringVar(&t.key, "key", "", "the record's `key` (\"prefix#hash\"), instead of an event")
	t.where.register(fs, "", "the DynamoDB `table` of the records (default: the function's POWERTOOLS_IDEMPOTENCY_TABLE)")
	fs.StringVar(&t.templatePath, "template", "", "the SAM `template` that defines the function")
	fs.StringVar(&t.resource, "resource", "", "the function's logical `ID` in --template")
	fs.Var(&t.functionName, "function-name", "the deployed function's `name` (AWS_LAMBDA_FUNCTION_NAME), the key prefix by default")
	t.code = map[string]*optString{}
	for _, f := range codeFlags {
		t.code[f.entry] = new(optString)
		fs.Var(t.code[f.entry], f.name, f.usage)
	}
	fs.BoolVar(&t.keyRequired, "key-required", false, "an event without a key is an error (WithKeyRequired)")
}

// function returns the function's settings, from the flags, the template
// and the environment, and where its records are: the flags that name
// the store, completed with what the template says of its table or Redis
// server, then with this command's environment.
func (t *target) function(environ func() []string) (handler.Function, storeFlags, error) {
	f := handler.Function{Code: map[string]handler.Setting{}, Env: map[string]handler.Setting{}}
	where := t.where
	shellTable := ""
	for _, kv := range environ() {
		name, value, _ := strings.Cut(kv, "=")
		f.Env[name] = handler.Setting{Value: value, Source: name + " in this command's environment"}
		if name == template.TableEnv {
			shellTable = value
		}
	}
	var tmpl *template.Template
	var table, redisURL *yaml.Node // the function's, as its template gives them
	switch {
	case t.templatePath != "":
		if t.resource == "" {
			return f, where, badInput(errors.New("--template needs --resource, the function's logical ID"))
		}
		var err error
		if tmpl, err = template.Read(t.templatePath); err != nil {
			return f, where, badInput(err)
		}
		fn := tmpl.Function(t.resource)
		if fn == nil {
			return f, where, badInput(fmt.Errorf("%s: no function %q; its functions: %s", t.templatePath, t.resource, functionIDs(tmpl)))
		}
		declared, err := handler.FromTemplate(fn)
		if err != nil {
			return f, where, badInput(fmt.Errorf("%s: %s: %w", t.templatePath, t.resource, err))
		}
		f.Code = declared.Code
		// The template's variables win over the shell's: they are the
		// function's.
		maps.Copy(f.Env, declared.Env)
		table, redisURL = fn.Variable(template.TableEnv), fn.Variable(redis.URLEnv)
	case t.resource != "":
		return f, where, badInput(errors.New("--resource needs --template"))
	}
	if t.functionName.set {
		f.Env[template.FunctionNameEnv] = handler.Setting{Value: t.functionName.value, Source: "--function-name"}
	}
	for _, fl := range codeFlags {
		if o := t.code[fl.entry]; o.set {
			f.Code[fl.entry] = handler.Setting{Value: o.value, Source: "--" + fl.name}
		}
	}
	if t.keyRequired {
		f.Code["KeyRequired"] = handler.Setting{Value: "true", Source: "--key-required"}
	}
	// A function whose template names a Redis server, and no table,
	// keeps its records in Redis.
	if where.kind == "" && redisURL != nil && table == nil {
		where.kind = storeRedis
	}
	if where.table == "" {
		if v, ok := tmpl.String(table); ok {
			where.table = v
		} else {
			where.table = shellTable
			if table != nil {
				where.unresolved = fmt.Sprintf("the template's %s is %s, which the command cannot resolve", template.TableEnv, template.Describe(table))
			}
		}
	}
	if where.redisURL == "" && redisURL != nil {
		if v, ok := tmpl.String(redisURL); ok {
			where.redisURL = v
		} else {
			where.unresolvedURL = fmt.Sprintf("the template's %s is %s, which the command cannot resolve", redis.URLEnv, template.Describe(redisURL))
		}
	}
	return f, where, nil
}

// functionIDs lists the logical IDs of t's functions.
func functionIDs(t *template.Template) string {
	var ids []string
	for _, fn := range t.Functions() {
		ids = append(ids, fn.ID)
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// wrapperError returns the error of building a function's wrapper: a
// declaration that cannot be read, or a missing key prefix, is the
// command line's; settings the function refuses are its own.
func wrapperError(err error) error {
	if _, ok := errors.AsType[*handler.DeclarationError](err); ok {
		return badInput(err)
	}
	if errors.Is(err, handler.ErrNoPrefix) {
		return badInput(fmt.Errorf("%w: give --function-name (or --key-prefix, when the function sets one)", err))
	}
	return fmt.Errorf("the function's settings: %w", err)
}

// subject is the record a command is about, resolved from its target.
type subject struct {
	store recordStore
	// wrapper is the function's, or, for a record named by its key, a
	// wrapper of its records (handler.Records).
	wrapper *handler.Wrapper
	// key is the record's: --key, or the event's once read.
	key string
	// event is the EVENT_FILE's; nil with --key.
	event []byte
}

// subject resolves t, with the EVENT_FILE in args when there is one, to
// a store and a wrapper. The caller closes sub.store.
func (c *cli) subject(ctx context.Context, t *target, args []string) (sub *subject, err error) {
	if (t.key == "") == (len(args) == 0) {
		return nil, badInput(errors.New("give either --key or an EVENT_FILE"))
	}
	f, where, err := t.function(c.environ)
	if err != nil {
		return nil, err
	}
	sub = &subject{key: t.key}
	if t.key != "" {
		sub.wrapper, err = handler.Records(f, c.now)
	} else {
		if sub.event, err = c.readEvent(args[0]); err != nil {
			return nil, badInput(err)
		}
		sub.wrapper, err = handler.New(f, c.now)
	}
	if err != nil {
		return nil, wrapperError(err)
	}
	if sub.store, err = c.open(ctx, &where); err != nil {
		return nil, err
	}
	return sub, nil
}

// read reads the subject's record and returns what a delivery meets. For
// an event, it sets the subject's key, the event's, unless the event has
// none.
func (s *subject) read(ctx context.Context) (*handler.Delivery, error) {
	lookup := func(ctx context.Context, key string) (*idempotency.Record, error) {
		rec, err := s.store.Get(ctx, key)
		if errors.Is(err, idempotency.ErrRecordNotFound) {
			return nil, nil
		}
		return rec, err
	}
	if s.event == nil {
		return s.wrapper.Meet(ctx, s.key, lookup)
	}
	d, err := s.wrapper.Deliver(ctx, s.event, lookup)
	if err != nil {
		return nil, err
	}
	s.key = d.Key
	return d, nil
}

// keyed returns the error of a delivery of the subject's event that has
// no key: the function refuses it, or runs it without idempotency.
func (s *subject) keyed(d *handler.Delivery, now func() time.Time) error {
	switch {
	case d.Key != "":
		return nil
	case d.Err != nil:
		return fmt.Errorf("the function refuses the event, before any record: %s", says(d, now()))
	}
	return errors.New(says(d, now()))
}

// readEvent reads the event of EVENT_FILE, "-" for standard input.
func (c *cli) readEvent(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(c.stdin)
	}
	return os.ReadFile(name)
}
