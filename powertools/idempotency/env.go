package idempotency

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// The environment variables read when a wrapper is built. An empty variable
// counts as unset. A variable whose setting is also given in code is not
// read at all, so a bad value there is harmless.
const (
	envDisabled     = "POWERTOOLS_IDEMPOTENCY_DISABLED"
	envEventKey     = "POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH"
	envValidation   = "POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH"
	envExpiresAfter = "POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER"
	envKeyPrefix    = "POWERTOOLS_IDEMPOTENCY_KEY_PREFIX"
	envFunctionName = "AWS_LAMBDA_FUNCTION_NAME"
	// envDev marks a development environment, as in every Powertools
	// runtime: there, switching idempotency off needs no warning.
	envDev = "POWERTOOLS_DEV"
)

// envString returns the variable's value and whether it is set and not
// empty.
func envString(name string) (string, bool) {
	v, ok := os.LookupEnv(name)
	return v, ok && v != ""
}

// envBool reads a boolean variable with the spellings Powertools accepts
// (Python's strtobool), in any case: 1, t, true, y, yes, on, and 0, f,
// false, n, no, off.
func envBool(name string) (value, set bool, err error) {
	v, ok := envString(name)
	if !ok {
		return false, false, nil
	}
	switch strings.ToLower(v) {
	case "1", "t", "true", "y", "yes", "on":
		return true, true, nil
	case "0", "f", "false", "n", "no", "off":
		return false, true, nil
	}
	return false, false, &ConfigError{Name: name, Err: fmt.Errorf("%q is not a boolean (want one of 1, t, true, y, yes, on, 0, f, false, n, no, off)", v)}
}

// envDuration reads a Go duration such as 1h or 90m.
func envDuration(name string) (value time.Duration, set bool, err error) {
	v, ok := envString(name)
	if !ok {
		return 0, false, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, false, &ConfigError{Name: name, Err: fmt.Errorf("%q is not a Go duration such as 1h or 90m", v)}
	}
	return d, true, nil
}

// errNoPrefix explains how to give a handler its key prefix.
var errNoPrefix = errors.New("no key prefix: use WithKeyPrefix, or set " + envKeyPrefix + " or " + envFunctionName)

// The variables of [WithMetrics], [WithMetricsNamespace] and
// [WithOutcomeLog]. POWERTOOLS_METRICS_NAMESPACE and
// POWERTOOLS_METRICS_DISABLED are those of the Metrics utility of
// Powertools for AWS Lambda, so that one setting serves both.
const (
	envMetrics          = "POWERTOOLS_IDEMPOTENCY_METRICS"
	envMetricsNamespace = "POWERTOOLS_METRICS_NAMESPACE"
	envMetricsDisabled  = "POWERTOOLS_METRICS_DISABLED"
	envOutcomeLog       = "POWERTOOLS_IDEMPOTENCY_LOG_OUTCOME"
)
