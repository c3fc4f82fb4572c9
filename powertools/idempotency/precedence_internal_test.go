package idempotency

import (
	"fmt"
	"testing"
	"time"
)

// TestPrecedence checks the one precedence every setting with an
// environment variable follows: an option given outright, then the
// variable, then the option given in WithDefaults, then the built-in
// default; for handlers and, where the setting applies to them, function
// wrappers.
func TestPrecedence(t *testing.T) {
	type setting struct {
		name     string
		variable string
		code     func(v string) Option
		values   [3]string // given outright, in the environment, in WithDefaults
		builtin  string
		got      func(e *engine) string
		forFunc  bool // the variable applies to a function wrapper too
	}
	dur := func(v string) time.Duration { d, _ := time.ParseDuration(v); return d }
	settings := []setting{
		{"event key", envEventKey, func(v string) Option { return WithEventKey(v) }, [3]string{"a", "b", "c"}, "@",
			func(e *engine) string { return e.keyExpr.String() }, false},
		{"payload validation", envValidation, func(v string) Option { return WithPayloadValidation(v) }, [3]string{"a", "b", "c"}, "",
			func(e *engine) string {
				if e.validation == nil {
					return ""
				}
				return e.validation.String()
			}, false},
		{"key prefix", envKeyPrefix, func(v string) Option { return WithKeyPrefix(v) }, [3]string{"code", "env", "default"}, "fn",
			func(e *engine) string { return e.prefix }, false},
		{"expiry", envExpiresAfter, func(v string) Option { return WithExpiresAfter(dur(v)) }, [3]string{"1h0m0s", "2h0m0s", "3h0m0s"}, "1h0m0s",
			func(e *engine) string { return e.expiresAfter.String() }, true},
		{"disabled", envDisabled, func(v string) Option { return WithDisabled(v == "true") }, [3]string{"true", "false", "true"}, "false",
			func(e *engine) string { return fmt.Sprint(e.disabled) }, true},
		{"abandon policy", envAbandonPolicy, func(v string) Option { p, _ := parseAbandonPolicy(v); return WithAbandonPolicy(p) },
			[3]string{"block", "uncertain", "block"}, "retry", func(e *engine) string { return e.abandon.String() }, true},
		{"wait for in progress", envWait, func(v string) Option { return WithWaitForInProgress(v == "true") }, [3]string{"true", "false", "true"}, "false",
			func(e *engine) string { return fmt.Sprint(e.wait) }, true},
		{"lease beyond deadline", envLeaseBeyond, func(v string) Option { return WithLeaseBeyondDeadline(dur(v)) }, [3]string{"1m0s", "2m0s", "3m0s"}, "0s",
			func(e *engine) string { return e.leaseBeyond.String() }, true},
	}
	for _, st := range settings {
		for mask := range 8 {
			code, env, def := mask&1 != 0, mask&2 != 0, mask&4 != 0
			t.Run(fmt.Sprintf("%s/code=%v,env=%v,default=%v", st.name, code, env, def), func(t *testing.T) {
				t.Setenv(envDev, "1")
				t.Setenv(envFunctionName, "fn")
				for _, v := range []string{envEventKey, envValidation, envKeyPrefix, envExpiresAfter, envDisabled, envAbandonPolicy, envWait, envLeaseBeyond} {
					t.Setenv(v, "")
				}
				var opts []Option
				if code {
					opts = append(opts, st.code(st.values[0]))
				}
				if env {
					t.Setenv(st.variable, st.values[1])
				}
				if def {
					opts = append([]Option{WithDefaults(st.code(st.values[2]))}, opts...)
				}
				want := st.builtin
				switch {
				case code:
					want = st.values[0]
				case env:
					want = st.values[1]
				case def:
					want = st.values[2]
				}
				e, err := build(nopStore{}, handlerKind, "", nil, opts)
				if err != nil {
					t.Fatal(err)
				}
				if got := st.got(e); got != want {
					t.Errorf("handler: %s = %q, want %q", st.name, got, want)
				}
				if st.name == "key prefix" {
					return // a function wrapper's prefix is its own
				}
				// A function wrapper reads only the variables that apply
				// to it; its defaults apply as for a handler.
				if env && !st.forFunc && !code {
					want = st.builtin
					if def {
						want = st.values[2]
					}
				}
				e, err = build(nopStore{}, funcKind, "f", nil, opts)
				if err != nil {
					t.Fatal(err)
				}
				if got := st.got(e); got != want {
					t.Errorf("function wrapper: %s = %q, want %q", st.name, got, want)
				}
			})
		}
	}
}
