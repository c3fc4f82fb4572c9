package idempotency

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"
)

// TestMetricsPrecedence checks that WithMetrics, WithMetricsNamespace and
// WithOutcomeLog follow the precedence of every setting with a variable
// (see TestPrecedence): an option given outright, then the variable, then
// the option given in WithDefaults, then the built-in default. The
// POWERTOOLS_IDEMPOTENCY_* variables apply to handlers only;
// POWERTOOLS_METRICS_NAMESPACE to function wrappers too.
func TestMetricsPrecedence(t *testing.T) {
	code, def := &bytes.Buffer{}, &bytes.Buffer{}
	name := func(w io.Writer) string {
		switch w {
		case nil:
			return "off"
		case os.Stdout:
			return "stdout"
		case code:
			return "code"
		case def:
			return "default"
		}
		return fmt.Sprintf("%v", w)
	}
	type setting struct {
		name     string
		variable string
		option   func(v string) Option
		values   [3]string // given outright, in the environment, in WithDefaults
		builtin  string
		got      func(kind wrapperKind, o, d telemetryOptions) string
		forFunc  bool
	}
	writers := map[string]io.Writer{"code": code, "default": def}
	settings := []setting{
		{"metrics", envMetrics, func(v string) Option { return WithMetrics(writers[v]) }, [3]string{"code", "true", "default"}, "off",
			func(kind wrapperKind, o, d telemetryOptions) string {
				w, err := metricsOutput(kind, o.metrics, d.metrics)
				if err != nil {
					t.Fatal(err)
				}
				return name(w)
			}, false},
		{"namespace", envMetricsNamespace, func(v string) Option { return WithMetricsNamespace(v) }, [3]string{"Code", "Env", "Default"}, "default_namespace",
			func(kind wrapperKind, o, d telemetryOptions) string {
				m, err := (&engine{prefix: "p"}).newMetricsWriter(io.Discard, o.namespace, d.namespace)
				if err != nil {
					t.Fatal(err)
				}
				return m.namespace
			}, true},
		{"outcome log", envOutcomeLog, func(v string) Option { return WithOutcomeLog(v == "true") }, [3]string{"true", "false", "true"}, "false",
			func(kind wrapperKind, o, d telemetryOptions) string {
				on, err := outcomeLogOn(kind, o.outcomeLog, d.outcomeLog)
				if err != nil {
					t.Fatal(err)
				}
				return fmt.Sprint(on)
			}, false},
	}
	for _, st := range settings {
		for mask := range 8 {
			inCode, inEnv, inDefaults := mask&1 != 0, mask&2 != 0, mask&4 != 0
			t.Run(fmt.Sprintf("%s/code=%v,env=%v,default=%v", st.name, inCode, inEnv, inDefaults), func(t *testing.T) {
				for _, v := range []string{envMetrics, envMetricsNamespace, envMetricsDisabled, envOutcomeLog} {
					t.Setenv(v, "")
				}
				var opts []Option
				if inCode {
					opts = append(opts, st.option(st.values[0]))
				}
				if inEnv {
					t.Setenv(st.variable, st.values[1])
				}
				if inDefaults {
					opts = append([]Option{WithDefaults(st.option(st.values[2]))}, opts...)
				}
				o, d := resolveOptions(opts)
				for _, kind := range []wrapperKind{handlerKind, funcKind} {
					want := st.builtin
					switch {
					case inCode:
						want = st.values[0]
					case inEnv && (kind == handlerKind || st.forFunc):
						want = st.values[1]
						if st.name == "metrics" {
							want = "stdout"
						}
					case inDefaults:
						want = st.values[2]
					}
					if got := st.got(kind, o.telemetry, d.telemetry); got != want {
						t.Errorf("kind %d: %s = %q, want %q", kind, st.name, got, want)
					}
				}
			})
		}
	}
}

// TestMetricsDisabledVariable checks POWERTOOLS_METRICS_DISABLED, the
// switch of Powertools for every metric: true turns off the metrics that
// the environment or WithDefaults turned on, not those given outright;
// false turns nothing on.
func TestMetricsDisabledVariable(t *testing.T) {
	code, def := &bytes.Buffer{}, &bytes.Buffer{}
	tests := []struct {
		disabled, metrics string
		opts              []Option
		want              io.Writer
	}{
		{"true", "true", nil, nil},
		{"true", "", []Option{WithDefaults(WithMetrics(def))}, nil},
		{"true", "true", []Option{WithMetrics(code)}, code},
		{"false", "", nil, nil},
		{"false", "true", nil, os.Stdout},
		{"false", "", []Option{WithDefaults(WithMetrics(def))}, def},
	}
	for _, tc := range tests {
		t.Setenv(envMetricsDisabled, tc.disabled)
		t.Setenv(envMetrics, tc.metrics)
		o, d := resolveOptions(tc.opts)
		for _, kind := range []wrapperKind{handlerKind, funcKind} {
			want := tc.want
			if kind == funcKind && want == os.Stdout {
				want = nil // the function wrapper does not read POWERTOOLS_IDEMPOTENCY_METRICS
			}
			if got, err := metricsOutput(kind, o.telemetry.metrics, d.telemetry.metrics); err != nil || got != want {
				t.Errorf("%s=%s, %s=%s, kind %d: got %v, %v", envMetricsDisabled, tc.disabled, envMetrics, tc.metrics, kind, got, err)
			}
		}
	}
}
