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

// variable is an environment variable read as an option.
type variable struct {
	name string
	// sets is the option the variable stands for.
	sets string
	// eventShaped variables describe the event, which a function
	// wrapper's argument is not: it does not read them.
	eventShaped bool
	option      func(value string) (Option, error)
}

// variables are read in this order, so that POWERTOOLS_METRICS_DISABLED,
// Powertools' switch for all its metrics, comes after
// POWERTOOLS_IDEMPOTENCY_METRICS.
var variables = []variable{
	{envDisabled, "WithDisabled", false, func(v string) (Option, error) { b, err := parseBool(v); return WithDisabled(b), err }},
	{envEventKey, "WithEventKey", true, func(v string) (Option, error) { return WithEventKey(v), nil }},
	{envValidation, "WithPayloadValidation", true, func(v string) (Option, error) { return WithPayloadValidation(v), nil }},
	{envExpiresAfter, "WithExpiresAfter", false, func(v string) (Option, error) { d, err := parseDuration(v); return WithExpiresAfter(d), err }},
	{envKeyPrefix, "WithKeyPrefix", true, func(v string) (Option, error) { return WithKeyPrefix(v), nil }},
	{envCompatibility, "WithCompatibility", false, func(v string) (Option, error) {
		for _, c := range []Compatibility{OwnFormat, PowertoolsPython, PowertoolsTypeScript} {
			if strings.EqualFold(v, c.String()) {
				return WithCompatibility(c), nil
			}
		}
		return nil, fmt.Errorf("%q is not own, python or typescript", v)
	}},
	{envHashFunction, "WithHash", false, func(v string) (Option, error) {
		if h, ok := hashNames[strings.ToLower(v)]; ok {
			return WithHash(h), nil
		}
		return nil, fmt.Errorf("%q is not md5, sha1, sha224, sha256, sha384 or sha512", v)
	}},
	{envPythonHandler, "WithPythonHandler", true, func(v string) (Option, error) { return WithPythonHandler(v), nil }},
	{envAbandonPolicy, "WithAbandonPolicy", false, func(v string) (Option, error) {
		for _, p := range []AbandonPolicy{AbandonRetry, AbandonBlock, AbandonUncertain} {
			if strings.EqualFold(v, p.String()) {
				return WithAbandonPolicy(p), nil
			}
		}
		return nil, fmt.Errorf("%q is not retry, block or uncertain", v)
	}},
	{envWait, "WithWaitForInProgress", false, func(v string) (Option, error) { b, err := parseBool(v); return WithWaitForInProgress(b), err }},
	{envLeaseBeyond, "WithLeaseBeyondDeadline", false, func(v string) (Option, error) { d, err := parseDuration(v); return WithLeaseBeyondDeadline(d), err }},
	{envMetrics, "WithMetrics", true, func(v string) (Option, error) {
		on, err := parseBool(v)
		if on {
			return WithMetrics(os.Stdout), err
		}
		return WithMetrics(nil), err
	}},
	{envMetricsDisabled, "WithMetrics", false, func(v string) (Option, error) {
		off, err := parseBool(v)
		if !off {
			return func(*options) {}, err
		}
		return WithMetrics(nil), err
	}},
	{envMetricsNamespace, "WithMetricsNamespace", false, func(v string) (Option, error) { return WithMetricsNamespace(v), nil }},
	{envOutcomeLog, "WithOutcomeLog", true, func(v string) (Option, error) { b, err := parseBool(v); return WithOutcomeLog(b), err }},
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
