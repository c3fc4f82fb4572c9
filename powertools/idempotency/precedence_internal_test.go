package idempotency

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"
	"time"
)

// TestPrecedence checks the one order every setting with an environment
// variable follows: an option given outright, then the variable, then the
// option given in WithDefaults, then the built-in default; for handlers
// and, where the variable applies to them, function wrappers. It covers
// every variable of the variables table.
func TestPrecedence(t *testing.T) {
	t.Parallel()
	dur := func(v string) time.Duration { d, _ := time.ParseDuration(v); return d }
	code, def := &bytes.Buffer{}, &bytes.Buffer{}
	writers := map[string]io.Writer{"code": code, "default": def, "true": os.Stdout}
	writerName := func(w io.Writer) string {
		for name, v := range writers {
			if v == w {
				return name
			}
		}
		return "off"
	}
	type setting struct {
		variable string
		option   func(v string) Option
		values   [3]string // given outright, in the environment, in WithDefaults
		builtin  string
		got      func(o *options) string
	}
	settings := []setting{
		{envEventKey, func(v string) Option { return WithEventKey(v) }, [3]string{"a", "b", "c"}, "",
			func(o *options) string { return o.eventKey }},
		{envValidation, func(v string) Option { return WithPayloadValidation(v) }, [3]string{"a", "b", "c"}, "",
			func(o *options) string { return o.validation }},
		{envKeyPrefix, func(v string) Option { return WithKeyPrefix(v) }, [3]string{"code", "env", "default"}, "",
			func(o *options) string { return o.keyPrefix }},
		{envExpiresAfter, func(v string) Option { return WithExpiresAfter(dur(v)) }, [3]string{"2h0m0s", "3h0m0s", "4h0m0s"}, "1h0m0s",
			func(o *options) string { return o.expiresAfter.String() }},
		{envDisabled, func(v string) Option { return WithDisabled(v == "true") }, [3]string{"true", "false", "true"}, "false",
			func(o *options) string { return fmt.Sprint(o.disabled) }},
		{envAbandonPolicy, func(v string) Option {
			return WithAbandonPolicy(map[string]AbandonPolicy{"block": AbandonBlock, "uncertain": AbandonUncertain}[v])
		}, [3]string{"block", "uncertain", "block"}, "retry", func(o *options) string { return o.abandon.String() }},
		{envWait, func(v string) Option { return WithWaitForInProgress(v == "true") }, [3]string{"true", "false", "true"}, "false",
			func(o *options) string { return fmt.Sprint(o.wait) }},
		{envLeaseBeyond, func(v string) Option { return WithLeaseBeyondDeadline(dur(v)) }, [3]string{"1m0s", "2m0s", "3m0s"}, "0s",
			func(o *options) string { return o.leaseBeyond.String() }},
		{envCompatibility, func(v string) Option {
			return WithCompatibility(map[string]Compatibility{"python": PowertoolsPython, "typescript": PowertoolsTypeScript}[v])
		}, [3]string{"python", "typescript", "python"}, "own", func(o *options) string { return o.compat.String() }},
		{envHashFunction, func(v string) Option { return WithHash(hashNames[v]) }, [3]string{"sha1", "sha512", "md5"}, "",
			func(o *options) string {
				for name, h := range hashNames {
					if h == o.hash {
						return name
					}
				}
				return ""
			}},
		{envPythonHandler, func(v string) Option { return WithPythonHandler(v) }, [3]string{"a.b", "c.d", "e.f"}, "",
			func(o *options) string { return o.pythonHandler }},
		{envMetrics, func(v string) Option { return WithCloudWatchMetrics(writers[v], "") }, [3]string{"code", "true", "default"}, "off",
			func(o *options) string { return writerName(o.metrics) }},
		{envMetricsNamespace, func(v string) Option { return WithCloudWatchMetrics(nil, v) }, [3]string{"Code", "Env", "Default"}, "default_namespace",
			func(o *options) string { return o.namespace }},
		{envOutcomeLog, func(v string) Option { return WithOutcomeLog(v == "true") }, [3]string{"true", "false", "true"}, "false",
			func(o *options) string { return fmt.Sprint(o.outcomeLog) }},
	}
	eventShaped := map[string]bool{}
	for _, v := range variables {
		eventShaped[v.name] = v.eventShaped
	}
	for _, st := range settings {
		want := func(code, env, def bool, kind wrapperKind) string {
			switch {
			case code:
				return st.values[0]
			case env && !(eventShaped[st.variable] && kind == funcKind):
				return st.values[1]
			case def:
				return st.values[2]
			}
			return st.builtin
		}
		for mask := range 8 {
			inCode, inEnv, inDefaults := mask&1 != 0, mask&2 != 0, mask&4 != 0
			t.Run(fmt.Sprintf("%s/code=%v,env=%v,default=%v", st.variable, inCode, inEnv, inDefaults), func(t *testing.T) {
				env := map[string]string{}
				var opts []Option
				if inCode {
					opts = append(opts, st.option(st.values[0]))
				}
				if inEnv {
					env[st.variable] = st.values[1]
				}
				if inDefaults {
					opts = append([]Option{WithDefaults(st.option(st.values[2]))}, opts...)
				}
				opts = append(opts, WithEnvironment(env))
				for _, kind := range []wrapperKind{handlerKind, funcKind} {
					o, err := resolve(opts, kind)
					if err != nil {
						t.Fatal(err)
					}
					if got, want := st.got(o), want(inCode, inEnv, inDefaults, kind); got != want {
						t.Errorf("kind %d: got %q, want %q", kind, got, want)
					}
				}
			})
		}
	}
	// Every variable but Lambda's is a setting above.
	tested := map[string]bool{envMetricsDisabled: true}
	for _, st := range settings {
		tested[st.variable] = true
	}
	for _, v := range variables {
		if !tested[v.name] {
			t.Errorf("%s is not tested", v.name)
		}
	}
}

// TestMetricsDisabledVariable checks POWERTOOLS_METRICS_DISABLED, the
// switch of Powertools for every metric: true turns off the metrics that
// the environment or WithDefaults turned on, not those given outright;
// false turns nothing on.
func TestMetricsDisabledVariable(t *testing.T) {
	t.Parallel()
	code, def := &bytes.Buffer{}, &bytes.Buffer{}
	tests := []struct {
		disabled, metrics string
		opts              []Option
		want              io.Writer
	}{
		{"true", "true", nil, nil},
		{"true", "", []Option{WithDefaults(WithCloudWatchMetrics(def, ""))}, nil},
		{"true", "true", []Option{WithCloudWatchMetrics(code, "")}, code},
		{"false", "", nil, nil},
		{"false", "true", nil, os.Stdout},
		{"false", "", []Option{WithDefaults(WithCloudWatchMetrics(def, ""))}, def},
	}
	for _, tc := range tests {
		opts := append(tc.opts, WithEnvironment(map[string]string{envMetricsDisabled: tc.disabled, envMetrics: tc.metrics}))
		for _, kind := range []wrapperKind{handlerKind, funcKind} {
			want := tc.want
			if kind == funcKind && want == os.Stdout {
				want = nil // the function wrapper does not read POWERTOOLS_IDEMPOTENCY_METRICS
			}
			if o, err := resolve(opts, kind); err != nil || o.metrics != want {
				t.Errorf("%s=%s, %s=%s, kind %d: got %v, %v", envMetricsDisabled, tc.disabled, envMetrics, tc.metrics, kind, o, err)
			}
		}
	}
}

// TestBadVariable checks that a variable that does not parse is a
// *ConfigError naming it, unless an option given outright overrides it.
func TestBadVariable(t *testing.T) {
	t.Parallel()
	for _, v := range variables {
		switch v.name {
		case envEventKey, envValidation, envKeyPrefix, envPythonHandler, envMetricsNamespace:
			continue // any text parses; build checks it
		}
		env := WithEnvironment(map[string]string{v.name: "not-a-value"})
		_, err := resolve([]Option{env}, handlerKind)
		if ce, ok := err.(*ConfigError); !ok || ce.Name != v.name {
			t.Errorf("%s: got %v, want a *ConfigError naming it", v.name, err)
		}
		if v.sets == settingMetrics {
			continue
		}
		// An option given outright overrides the variable, unread.
		var override Option
		switch v.sets {
		case "WithDisabled":
			override = WithDisabled(false)
		case "WithExpiresAfter":
			override = WithExpiresAfter(time.Hour)
		case "WithCompatibility":
			override = WithCompatibility(OwnFormat)
		case "WithHash":
			override = WithHash(0)
		case "WithAbandonPolicy":
			override = WithAbandonPolicy(AbandonRetry)
		case "WithWaitForInProgress":
			override = WithWaitForInProgress(false)
		case "WithLeaseBeyondDeadline":
			override = WithLeaseBeyondDeadline(0)
		case "WithOutcomeLog":
			override = WithOutcomeLog(false)
		default:
			t.Fatalf("%s: no override for %s", v.name, v.sets)
		}
		if _, err := resolve([]Option{env, override}, handlerKind); err != nil {
			t.Errorf("%s overridden by %s: %v", v.name, v.sets, err)
		}
	}
}
