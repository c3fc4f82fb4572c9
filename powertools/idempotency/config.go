package idempotency

import (
	"cmp"
	"context"
	"crypto"
	"io"
	"log/slog"
	"os"
	"reflect"
	"time"

	"github.com/gopowertools/lambda/jmespath"
)

// Options become an engine in two steps: resolve applies them in their
// one order of precedence, then build checks the result, once.

// options holds every setting, from the built-in default to what the last
// option applied gave, and who gave each.
type options struct {
	eventKey, validation       string // "": the whole event; no validation
	keyPrefix                  string
	keyRequired                bool
	expiresAfter, lease        time.Duration
	cacheSize                  int
	replayHook                 replayFunc
	replayOut                  reflect.Type // the Out of WithReplayHook's function
	reconcile                  reconcileFunc
	reconcileOut               reflect.Type // the Out of WithReconcile's function
	jmespath                   []jmespath.Option
	functions                  []jmespath.Function // deprecated WithJMESPathFunctions
	decodeLimit                int                 // deprecated WithDecodeLimit; 0: jmespath's default
	observer                   func(context.Context, Observation)
	useNumber, disallowUnknown bool
	clock                      func() time.Time
	logger                     *slog.Logger
	disabled                   bool
	compat                     Compatibility
	hash                       crypto.Hash // 0: the compatibility's
	pythonHandler              string
	abandon                    AbandonPolicy
	wait                       bool
	leaseBeyond                time.Duration
	metrics                    io.Writer // nil: off; settingMetrics
	namespace                  string    // settingNamespace
	outcomeLog                 bool
	former                     formerValidation // an adapter's, replaced by its default

	defaults []Option          // WithDefaults
	env      map[string]string // WithEnvironment; nil: the process's

	// Bookkeeping of resolve: the level being applied and, for the
	// environment, the variable; who set each option, by its name; and
	// a variable that did not parse, until a later level sets its option.
	level    level
	variable string
	given    map[string]source
	errs     map[string]error
}

// level is where an option comes from, in the order they apply: each
// overrides the ones before it.
type level int

const (
	levelDefault level = iota // WithDefaults
	levelEnv                  // the environment
	levelCode                 // given outright
)

// source is who gave an option: its name as a *ConfigError reports it
// (the option's or the variable's), and its level.
type source struct {
	name  string
	level level
}

// set records that the option named option was applied.
func (o *options) set(option string) { o.setting(option, option) }

// setting records that option set the setting named key, which is the
// option's own name but for the two settings of WithCloudWatchMetrics.
func (o *options) setting(key, option string) {
	if o.given == nil {
		return // a scan for WithDefaults and WithEnvironment
	}
	o.given[key] = source{name: cmp.Or(o.variable, option), level: o.level}
	delete(o.errs, key)
}

// The two settings of WithCloudWatchMetrics, the writer and the namespace,
// which variables give apart.
const (
	settingMetrics   = "WithCloudWatchMetrics"
	settingNamespace = "WithCloudWatchMetrics(namespace)"
)

// isSet reports whether option was given at any level, and by whom.
func (o *options) isSet(option string) (source, bool) {
	s, ok := o.given[option]
	return s, ok
}

// wrapperKind tells resolve which variables apply: a handler reads the
// event-shaped ones, a function wrapper does not, because its argument is
// not the event.
type wrapperKind int

const (
	handlerKind wrapperKind = iota
	funcKind
)

// resolve applies opts in the one order of precedence: the built-in
// defaults, then the options given to WithDefaults, then the environment
// (the variables, each read as the option it spells), then the options
// given outright. Each overrides what came before it. A variable that
// does not parse is an error only if nothing after it sets its option.
func resolve(opts []Option, kind wrapperKind) (*options, error) {
	var scan options
	for _, opt := range opts {
		if opt != nil {
			opt(&scan)
		}
	}
	o := &options{
		expiresAfter: time.Hour,
		lease:        time.Minute,
		namespace:    defaultMetricsNamespace,
		given:        map[string]source{},
		errs:         map[string]error{},
	}
	apply := func(l level, opts []Option) {
		o.level = l
		for _, opt := range opts {
			if opt != nil {
				opt(o)
			}
		}
	}
	apply(levelDefault, scan.defaults)
	if scan.env != nil {
		o.env = scan.env
	}
	o.level = levelEnv
	for _, v := range variables {
		value := o.getenv(v.name)
		if value == "" || (v.eventShaped && kind == funcKind) {
			continue
		}
		opt, err := v.read(value)
		if err != nil {
			o.errs[v.sets] = &ConfigError{Name: v.name, Err: err}
			continue
		}
		o.variable = v.name
		opt(o)
		o.variable = ""
	}
	apply(levelCode, opts)
	for _, v := range variables { // the first variable's error, in their order
		if err := o.errs[v.sets]; err != nil {
			return nil, err
		}
	}
	return o, nil
}

// getenv reads a variable of the wrapper's environment.
func (o *options) getenv(name string) string {
	if o.env != nil {
		return o.env[name]
	}
	return os.Getenv(name)
}
