package idempotency_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gopowertools/lambda/jmespath"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// lower is a custom JMESPath function: order ids compared without case.
var lower = jmespath.Function{
	Name:   "lower",
	Params: []jmespath.Param{{Types: jmespath.TypeString}},
	Call:   func(args []any) (any, error) { return strings.ToLower(args[0].(string)), nil },
}

// TestJMESPathFunctions checks that custom functions reach the key and
// validation expressions, from code and from the environment, and that an
// expression calling an unknown one fails at build time.
func TestJMESPathFunctions(t *testing.T) {
	for _, fromEnv := range []bool{false, true} {
		name := "code"
		if fromEnv {
			name = "environment"
		}
		t.Run(name, func(t *testing.T) {
			opts := []idempotency.Option{idempotency.WithKeyPrefix(prefix), idempotency.WithJMESPath(jmespath.WithFunctions(lower))}
			if fromEnv {
				setEnv(t, map[string]string{"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH": "lower(order_id)"})
			} else {
				opts = append(opts, idempotency.WithEventKey("lower(order_id)"))
			}
			var e echo
			h := idempotency.Wrap(idempotencytest.NewStore(), e.handle, opts...)
			for _, event := range []string{`{"order_id":"ORD-1"}`, `{"order_id":"ord-1"}`} {
				if _, err := h.Invoke(context.Background(), []byte(event)); err != nil {
					t.Fatal(err)
				}
			}
			if e.calls != 1 {
				t.Errorf("handler ran %d times, want 1: both events have the key lower(order_id)", e.calls)
			}
		})
	}
	t.Run("unknown function", func(t *testing.T) {
		_, err := idempotency.New(idempotencytest.NewStore(), func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil },
			idempotency.WithKeyPrefix(prefix), idempotency.WithEventKey("lower(order_id)"))
		var ce *idempotency.ConfigError
		var unknown *jmespath.UnknownFunctionError
		if !errors.As(err, &ce) || ce.Name != "WithEventKey" || !errors.As(err, &unknown) {
			t.Errorf("New = %v, want a *ConfigError for WithEventKey wrapping *jmespath.UnknownFunctionError", err)
		}
	})
}

// unhex is a custom JMESPath function that decodes hex digits into text,
// as a user might write it: bytes that are not UTF-8 become a string all
// the same.
var unhex = jmespath.Function{
	Name:   "unhex",
	Params: []jmespath.Param{{Types: jmespath.TypeString}},
	Call: func(args []any) (any, error) {
		b, err := hex.DecodeString(args[0].(string))
		return string(b), err
	},
}

// TestFunctionTextNotUTF8Refused keys on what a custom function returns:
// ff01 and fe01 decode to bytes that are not UTF-8, which every format
// would write as U+FFFD, giving the two one key. Each is refused before
// any store call, as the library refuses such text everywhere else.
func TestFunctionTextNotUTF8Refused(t *testing.T) {
	t.Parallel()
	for _, compat := range []idempotency.Compatibility{idempotency.OwnFormat, idempotency.PowertoolsPython, idempotency.PowertoolsTypeScript} {
		for _, expr := range []string{"unhex(id)", "[unhex(id)]", "{k: unhex(id)}"} {
			t.Run(compat.String()+" "+expr, func(t *testing.T) {
				var e echo
				h := idempotency.Wrap(untouchedStore{t}, e.handle, idempotency.WithKeyPrefix(prefix), idempotency.WithCompatibility(compat),
					idempotency.WithJMESPath(jmespath.WithFunctions(unhex)), idempotency.WithEventKey(expr))
				for _, event := range []string{`{"id":"ff01"}`, `{"id":"fe01"}`} {
					_, err := h.Invoke(context.Background(), []byte(event))
					if ie, ok := errors.AsType[*idempotency.InvalidEventError](err); !ok || ie.Expression != expr {
						t.Errorf("%s: %v; want an *InvalidEventError for %s", event, err, expr)
					}
				}
				if e.calls != 0 {
					t.Errorf("the handler ran %d times", e.calls)
				}
			})
		}
	}
	// Text that is UTF-8 is keyed.
	var e echo
	h := idempotency.Wrap(idempotencytest.NewStore(), e.handle, idempotency.WithKeyPrefix(prefix),
		idempotency.WithJMESPath(jmespath.WithFunctions(unhex)), idempotency.WithEventKey("unhex(id)"))
	if _, err := h.Invoke(context.Background(), []byte(`{"id":"c3a9"}`)); err != nil {
		t.Errorf("é: %v", err)
	}
}
