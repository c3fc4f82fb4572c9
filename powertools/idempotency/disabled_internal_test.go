package idempotency

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestDisabledSpellings checks POWERTOOLS_IDEMPOTENCY_DISABLED against the
// spellings Powertools accepts (Python's strtobool), in any case.
func TestDisabledSpellings(t *testing.T) {
	tests := []struct {
		value   string
		want    bool
		invalid bool
	}{
		{value: "1", want: true}, {value: "t", want: true}, {value: "true", want: true},
		{value: "y", want: true}, {value: "yes", want: true}, {value: "on", want: true},
		{value: "TRUE", want: true}, {value: "Yes", want: true}, {value: "ON", want: true},
		{value: "0"}, {value: "f"}, {value: "false"}, {value: "n"}, {value: "no"}, {value: "off"},
		{value: "False"}, {value: "NO"}, {value: "Off"},
		{value: "maybe", invalid: true}, {value: "2", invalid: true}, {value: "enabled", invalid: true},
		{value: " true", invalid: true},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			t.Setenv(envDisabled, tc.value)
			t.Setenv(envDev, "1") // no warnings here
			e, err := build(nopStore{}, wrapper{kind: funcKind, name: "f"}, nil)
			if tc.invalid {
				var ce *ConfigError
				if !errors.As(err, &ce) || ce.Name != envDisabled {
					t.Fatalf("build = %v, want a *ConfigError for %s", err, envDisabled)
				}
				return
			}
			if err != nil || e.disabled != tc.want {
				t.Errorf("build = %v, disabled %v; want disabled %v", err, e != nil && e.disabled, tc.want)
			}
		})
	}
}

// TestDisabledWarnsOncePerProcess checks that switching idempotency off
// logs a warning once per process, whether from the environment or from
// code, unless POWERTOOLS_DEV marks a development environment.
func TestDisabledWarnsOncePerProcess(t *testing.T) {
	handler := func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }
	tests := []struct {
		name  string
		env   map[string]string
		opts  []Option
		warns int
	}{
		{"variable, twice", map[string]string{envDisabled: "yes"}, nil, 1},
		{"option, twice", nil, []Option{WithDisabled(true)}, 1},
		{"POWERTOOLS_DEV", map[string]string{envDisabled: "on", envDev: "true"}, nil, 0},
		{"enabled", map[string]string{envDisabled: "off"}, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			disabledWarned.Store(false)
			t.Cleanup(func() { disabledWarned.Store(false) })
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var logs bytes.Buffer
			opts := append([]Option{WithKeyPrefix("p"), WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))}, tc.opts...)
			for range 2 {
				if _, err := New(nopStore{}, handler, opts...); err != nil {
					t.Fatal(err)
				}
			}
			if got := strings.Count(logs.String(), "level=WARN"); got != tc.warns {
				t.Errorf("%d warnings, want %d:\n%s", got, tc.warns, logs.String())
			}
		})
	}
}

// nopStore is a Store that is never called in these tests.
type nopStore struct{ Store }
