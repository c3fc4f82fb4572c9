package dynamo

import (
	"errors"
	"testing"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

func TestOptions(t *testing.T) {
	t.Setenv(TableEnv, "")
	t.Setenv(functionNameEnv, "orders")
	tests := []struct {
		name     string
		env      string
		opt      func(*Options)
		wantName string // the ConfigError's Name, "" for no error
		check    func(t *testing.T, o Options)
	}{
		{"TableFromEnv", "from-env", func(*Options) {}, "", func(t *testing.T, o Options) {
			if o.TableName != "from-env" {
				t.Errorf("TableName = %q, want from-env", o.TableName)
			}
		}},
		{"CodeWinsOverEnv", "from-env", func(o *Options) { o.TableName = "code" }, "", func(t *testing.T, o Options) {
			if o.TableName != "code" {
				t.Errorf("TableName = %q, want code", o.TableName)
			}
		}},
		{"PowertoolsDefaults", "t", func(*Options) {}, "", func(t *testing.T, o Options) {
			want := Options{TableName: "t", KeyAttr: "id", StaticPartitionKey: "idempotency#orders", ExpiryAttr: "expiration",
				LeaseEndAttr: "in_progress_expiration", StatusAttr: "status", DataAttr: "data", ValidationAttr: "validation",
				LeaseTokenAttr: "lease_token", ResponseOmittedAttr: "response_omitted", ResponseOmittedReasonAttr: "response_omitted_reason", CompletedAtAttr: "completed_at",
				DeadlineAttr: "invocation_deadline"}
			if o != want {
				t.Errorf("defaults = %+v, want %+v", o, want)
			}
		}},
		{"NoTable", "", func(*Options) {}, "dynamo.Options.TableName", nil},
		{"EmptyAttr", "t", func(o *Options) { o.StatusAttr = "" }, "dynamo.Options.StatusAttr", nil},
		{"DuplicateAttr", "t", func(o *Options) { o.DataAttr = "status" }, "dynamo.Options.DataAttr", nil},
		{"SortKeyClashes", "t", func(o *Options) { o.SortKeyAttr = "id" }, "dynamo.Options.SortKeyAttr", nil},
		{"CompositeWithoutPartitionKey", "t", func(o *Options) { o.SortKeyAttr = "sk"; o.StaticPartitionKey = "" }, "dynamo.Options.StaticPartitionKey", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(TableEnv, tt.env)
			_, err := New(&fakeClient{}, tt.opt)
			o, _ := options([]func(*Options){tt.opt})
			if tt.wantName == "" {
				if err != nil {
					t.Fatalf("New error: %v", err)
				}
				tt.check(t, o)
				return
			}
			var ce *idempotency.ConfigError
			if !errors.As(err, &ce) || ce.Name != tt.wantName || !errors.As(err, new(*idempotency.ConfigError)) {
				t.Fatalf("New error = %v, want a *ConfigError named %s", err, tt.wantName)
			}
		})
	}
}

func TestNewNilClient(t *testing.T) {
	t.Parallel()
	if _, err := New(nil, func(o *Options) { o.TableName = "t" }); !errors.As(err, new(*idempotency.ConfigError)) {
		t.Fatalf("New(nil) error = %v, want ErrConfig", err)
	}
}
