package template

import (
	"errors"
	"fmt"
	"time"
)

// The environment variables a function's idempotency settings come from
// (see the package documentation of powertools/idempotency).
const (
	EventKeyEnv     = "POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH"
	ValidationEnv   = "POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH"
	ExpiresAfterEnv = "POWERTOOLS_IDEMPOTENCY_EXPIRES_AFTER"
	KeyPrefixEnv    = "POWERTOOLS_IDEMPOTENCY_KEY_PREFIX"
	FunctionNameEnv = "AWS_LAMBDA_FUNCTION_NAME"
	TableEnv        = "POWERTOOLS_IDEMPOTENCY_TABLE"
)

// DefaultExpiresAfter is the library's record expiry when nothing sets it.
const DefaultExpiresAfter = time.Hour

// MetadataKey is the entry of a function's Metadata that declares the
// settings its code gives outright, which the template cannot otherwise
// see:
//
//	Metadata:
//	  Idempotency:
//	    WrapFunc: orders.fulfil        # idempotency.WrapFunc's name
//	    EventKey: order_id             # WithEventKey
//	    PayloadValidation: "[customer, amount, currency]"
//	    KeyPrefix: payments            # WithKeyPrefix
//	    KeyRequired: true              # WithKeyRequired
//	    ExpiresAfter: 96h              # WithExpiresAfter
const MetadataKey = "Idempotency"

// Code is what a function's code sets outright: it wins over the
// environment, as an option given in code does. A nil field is not set.
type Code struct {
	// WrapFunc is the name given to idempotency.WrapFunc when the key is
	// taken from a wrapped function's argument rather than from the
	// event; "" for a handler.
	WrapFunc          string
	EventKey          *string
	PayloadValidation *string
	KeyPrefix         *string
	KeyRequired       bool
	ExpiresAfter      time.Duration // 0: not set
}

// Code returns what the function's Metadata.Idempotency declares. An
// unknown entry, or a value of the wrong kind, is an error.
func (f *Function) Code() (Code, error) {
	var c Code
	keys, values := Entries(Lookup(f.Metadata, MetadataKey))
	for i, k := range keys {
		v := values[i]
		s, ok := f.t.String(v)
		if !ok {
			return Code{}, fmt.Errorf("Metadata.%s.%s is not a string", MetadataKey, k)
		}
		switch k {
		case "WrapFunc":
			c.WrapFunc = s
		case "EventKey":
			c.EventKey = &s
		case "PayloadValidation":
			c.PayloadValidation = &s
		case "KeyPrefix":
			c.KeyPrefix = &s
		case "KeyRequired":
			b, ok := f.t.Bool(v)
			if !ok {
				return Code{}, fmt.Errorf("Metadata.%s.KeyRequired is %q, want true or false", MetadataKey, s)
			}
			c.KeyRequired = b
		case "ExpiresAfter":
			d, err := time.ParseDuration(s)
			if err != nil || d < time.Second {
				return Code{}, fmt.Errorf("Metadata.%s.ExpiresAfter is %q, want a Go duration of at least 1s", MetadataKey, s)
			}
			c.ExpiresAfter = d
		default:
			return Code{}, fmt.Errorf("Metadata.%s has an unknown entry %q (known: WrapFunc, EventKey, PayloadValidation, KeyPrefix, KeyRequired, ExpiresAfter)", MetadataKey, k)
		}
	}
	return c, nil
}

// Settings are what a function's idempotency key and record expiry depend
// on.
type Settings struct {
	// WrapFunc is idempotency.WrapFunc's name, or "" for a handler.
	WrapFunc string
	// EventKey is the key expression ("" for the whole event or
	// argument); EventKeySet reports whether the code or the environment
	// sets it.
	EventKey    string
	EventKeySet bool
	// PayloadValidation is the validation expression, "" when off.
	PayloadValidation string
	// KeyPrefix is the part of the key before "#"; "" when nothing gives
	// one (no function name).
	KeyPrefix    string
	KeyRequired  bool
	ExpiresAfter time.Duration
}

// Resolve resolves a function's settings from what its code sets and its
// environment, as powertools/idempotency does: the code first, then the
// environment (an empty variable is unset), then the defaults. A
// function wrapper reads only the expiry from the environment, and its key
// prefix is "<function name>.<WrapFunc>".
func Resolve(code Code, env map[string]string) (Settings, error) {
	s := Settings{WrapFunc: code.WrapFunc, KeyRequired: code.KeyRequired, ExpiresAfter: DefaultExpiresAfter}
	handler := code.WrapFunc == ""
	if code.EventKey != nil {
		s.EventKey, s.EventKeySet = *code.EventKey, true
	} else if v := env[EventKeyEnv]; v != "" && handler {
		s.EventKey, s.EventKeySet = v, true
	}
	if code.PayloadValidation != nil {
		s.PayloadValidation = *code.PayloadValidation
	} else if handler {
		s.PayloadValidation = env[ValidationEnv]
	}
	switch {
	case code.ExpiresAfter != 0:
		s.ExpiresAfter = code.ExpiresAfter
	case env[ExpiresAfterEnv] != "":
		d, err := time.ParseDuration(env[ExpiresAfterEnv])
		if err != nil || d < time.Second {
			return Settings{}, fmt.Errorf("%s=%q is not a Go duration of at least 1s", ExpiresAfterEnv, env[ExpiresAfterEnv])
		}
		s.ExpiresAfter = d
	}
	fn := env[FunctionNameEnv]
	switch {
	case !handler && code.KeyPrefix != nil:
		return Settings{}, errors.New("a function wrapper's key prefix is the function's name and its own: KeyPrefix does not apply with WrapFunc")
	case !handler && fn != "":
		s.KeyPrefix = fn + "." + code.WrapFunc
	case !handler:
		s.KeyPrefix = code.WrapFunc
	case code.KeyPrefix != nil:
		s.KeyPrefix = *code.KeyPrefix
	case env[KeyPrefixEnv] != "":
		s.KeyPrefix = env[KeyPrefixEnv]
	default:
		s.KeyPrefix = fn
	}
	return s, nil
}

// Settings returns the function's settings, from its Metadata and its
// environment in the template.
func (f *Function) Settings() (Settings, error) {
	code, err := f.Code()
	if err != nil {
		return Settings{}, err
	}
	return Resolve(code, f.Env())
}

// Idempotent reports whether the function keeps idempotency records: it
// names a table in POWERTOOLS_IDEMPOTENCY_TABLE, or declares its settings
// in Metadata.
func (f *Function) Idempotent() bool {
	return f.Variable(TableEnv) != nil || Lookup(f.Metadata, MetadataKey) != nil
}

// Table returns the logical ID of the table the function names in
// POWERTOOLS_IDEMPOTENCY_TABLE, or "" when it is not a table (an
// AWS::DynamoDB::Table or AWS::DynamoDB::GlobalTable) of the template.
func (f *Function) Table() string {
	id, _ := f.t.Ref(f.Variable(TableEnv))
	if r := f.t.Resource(id); r == nil || !IsTable(r.Type) {
		return ""
	}
	return id
}

// IsTable reports whether a resource type is a DynamoDB table.
func IsTable(typ string) bool {
	return typ == "AWS::DynamoDB::Table" || typ == "AWS::DynamoDB::GlobalTable"
}
