package idempotency

import (
	"crypto"
	"fmt"
	"os"
	"strings"
	"time"
)

// The environment variables a wrapper reads when it is built, each the
// spelling of one option (docs/configuration.md says which are Powertools'
// and why each Go-only one exists). An empty variable counts as unset.
const (
	envDisabled         = "POWERTOOLS_IDEMPOTENCY_DISABLED"
	envEventKey         = "POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH"
	envValidation       = "POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH"
	envExpiresAfter     = "POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER"
	envKeyPrefix        = "POWERTOOLS_IDEMPOTENCY_KEY_PREFIX"
	envCompatibility    = "POWERTOOLS_IDEMPOTENCY_COMPATIBILITY"
	envHashFunction     = "POWERTOOLS_IDEMPOTENCY_HASH_FUNCTION"
	envPythonHandler    = "POWERTOOLS_IDEMPOTENCY_PYTHON_HANDLER"
	envAbandonPolicy    = "POWERTOOLS_IDEMPOTENCY_ABANDON_POLICY"
	envWait             = "POWERTOOLS_IDEMPOTENCY_WAIT_FOR_IN_PROGRESS"
	envLeaseBeyond      = "POWERTOOLS_IDEMPOTENCY_LEASE_BEYOND_DEADLINE"
	envMetrics          = "POWERTOOLS_IDEMPOTENCY_METRICS"
	envMetricsNamespace = "POWERTOOLS_METRICS_NAMESPACE"
	envMetricsDisabled  = "POWERTOOLS_METRICS_DISABLED"
	envOutcomeLog       = "POWERTOOLS_IDEMPOTENCY_LOG_OUTCOME"

	// envFunctionName is Lambda's: the default key prefix, and a metrics
	// dimension.
	envFunctionName = "AWS_LAMBDA_FUNCTION_NAME"
	// envDev marks a development environment, as in every Powertools
	// runtime: there, switching idempotency off needs no warning.
	envDev = "POWERTOOLS_DEV"
)

// spellings read an option's value from text, as its environment variable
// spells it: the one reading of these values, which the operator command
// also gives the declarations of a function's template (see
// internal/settingsource). WithKeyRequired has no variable, but a spelling.
var spellings = map[string]func(value string) (Option, error){
	"WithDisabled":            parsed(parseBool, WithDisabled),
	"WithEventKey":            text(WithEventKey),
	"WithPayloadValidation":   text(WithPayloadValidation),
	"WithKeyPrefix":           text(WithKeyPrefix),
	"WithKeyRequired":         parsed(parseBool, WithKeyRequired),
	"WithExpiresAfter":        parsed(parseDuration, WithExpiresAfter),
	"WithCompatibility":       parsed(parseCompatibility, WithCompatibility),
	"WithHash":                parsed(parseHash, WithHash),
	"WithPythonHandler":       text(WithPythonHandler),
	"WithAbandonPolicy":       parsed(parseAbandonPolicy, WithAbandonPolicy),
	"WithWaitForInProgress":   parsed(parseBool, WithWaitForInProgress),
	"WithLeaseBeyondDeadline": parsed(parseDuration, WithLeaseBeyondDeadline),
	"WithOutcomeLog":          parsed(parseBool, WithOutcomeLog),
}

// text spells an option that takes text as it is.
func text(opt func(string) Option) func(string) (Option, error) {
	return func(v string) (Option, error) { return opt(v), nil }
}

// parsed spells an option whose value parse reads.
func parsed[T any](parse func(string) (T, error), opt func(T) Option) func(string) (Option, error) {
	return func(v string) (Option, error) {
		x, err := parse(v)
		if err != nil {
			return nil, err
		}
		return opt(x), nil
	}
}

// variable is an environment variable read as an option.
type variable struct {
	name string
	// sets is the option the variable stands for.
	sets string
	// eventShaped variables describe the event, which a function
	// wrapper's argument is not: it does not read them.
	eventShaped bool
	// option reads the value; nil reads it with the option's spelling.
	option func(value string) (Option, error)
}

// read returns the option that value of v gives.
func (v variable) read(value string) (Option, error) {
	if v.option != nil {
		return v.option(value)
	}
	return spellings[v.sets](value)
}

// variables are read in this order, so that POWERTOOLS_METRICS_DISABLED,
// Powertools' switch for all its metrics, comes after
// POWERTOOLS_IDEMPOTENCY_METRICS.
var variables = []variable{
	{envDisabled, "WithDisabled", false, nil},
	{envEventKey, "WithEventKey", true, nil},
	{envValidation, "WithPayloadValidation", true, nil},
	{envExpiresAfter, "WithExpiresAfter", false, nil},
	{envKeyPrefix, "WithKeyPrefix", true, nil},
	{envCompatibility, "WithCompatibility", false, nil},
	{envHashFunction, "WithHash", false, nil},
	{envPythonHandler, "WithPythonHandler", true, nil},
	{envAbandonPolicy, "WithAbandonPolicy", false, nil},
	{envWait, "WithWaitForInProgress", false, nil},
	{envLeaseBeyond, "WithLeaseBeyondDeadline", false, nil},
	// The metrics' switches, whose values are not a writer's spelling,
	// and their namespace, which the switches leave as it is.
	{envMetrics, settingMetrics, true, func(v string) (Option, error) {
		on, err := parseBool(v)
		if on {
			return WithCloudWatchMetrics(os.Stdout, ""), err
		}
		return WithCloudWatchMetrics(nil, ""), err
	}},
	{envMetricsDisabled, settingMetrics, false, func(v string) (Option, error) {
		off, err := parseBool(v)
		if !off {
			return func(*options) {}, err
		}
		return WithCloudWatchMetrics(nil, ""), err
	}},
	{envMetricsNamespace, settingNamespace, false, func(v string) (Option, error) {
		return func(o *options) { o.namespace = v; o.setting(settingNamespace, envMetricsNamespace) }, nil
	}},
	{envOutcomeLog, "WithOutcomeLog", true, nil},
}

// parseCompatibility reads own, python or typescript, in any case.
func parseCompatibility(v string) (Compatibility, error) {
	for _, c := range []Compatibility{OwnFormat, PowertoolsPython, PowertoolsTypeScript} {
		if strings.EqualFold(v, c.String()) {
			return c, nil
		}
	}
	return 0, fmt.Errorf("%q is not own, python or typescript", v)
}

// parseHash reads a hash by its name in hashNames, in any case.
func parseHash(v string) (crypto.Hash, error) {
	if h, ok := hashNames[strings.ToLower(v)]; ok {
		return h, nil
	}
	return 0, fmt.Errorf("%q is not md5, sha1, sha224, sha256, sha384 or sha512", v)
}

// parseAbandonPolicy reads retry, block or uncertain, in any case.
func parseAbandonPolicy(v string) (AbandonPolicy, error) {
	for _, p := range []AbandonPolicy{AbandonRetry, AbandonBlock, AbandonUncertain} {
		if strings.EqualFold(v, p.String()) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%q is not retry, block or uncertain", v)
}

// hashNames are the hashes [WithHash] accepts, by the names that
// Python's hashlib and Node's crypto.createHash both give them.
var hashNames = map[string]crypto.Hash{
	"md5":    crypto.MD5,
	"sha1":   crypto.SHA1,
	"sha224": crypto.SHA224,
	"sha256": crypto.SHA256,
	"sha384": crypto.SHA384,
	"sha512": crypto.SHA512,
}

// parseBool reads a boolean with the spellings Powertools accepts
// (Python's strtobool), in any case.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "t", "true", "y", "yes", "on":
		return true, nil
	case "0", "f", "false", "n", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (want one of 1, t, true, y, yes, on, 0, f, false, n, no, off)", v)
}

// parseDuration reads a Go duration such as 1h or 90m.
func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a Go duration such as 1h or 90m", v)
	}
	return d, nil
}
