package template

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/gopowertools/lambda/redis"
)

// The environment variables that tell a function's idempotency apart from
// the template: the table its DynamoDB store keeps records in
// (github.com/gopowertools/lambda/dynamo), and the function's name, which
// Lambda sets and the default key prefix is.
const (
	TableEnv        = "POWERTOOLS_IDEMPOTENCY_TABLE"
	FunctionNameEnv = "AWS_LAMBDA_FUNCTION_NAME"
)

// MetadataKey is the entry of a function's Metadata that declares the
// settings its code gives outright, which the template cannot otherwise
// see (cmd/idempotency/internal/handler lists the entries and reads them):
//
//	Metadata:
//	  Idempotency:
//	    WrapFunc: orders.fulfil        # idempotency.WrapFunc's name
//	    EventKey: order_id             # WithEventKey
//	    PayloadValidation: "[customer, amount, currency]"
const MetadataKey = "Idempotency"

// Declared returns the entries of the function's Metadata.Idempotency as
// written, each a string (see [Template.String]): a value of another kind
// is an error, as is a Metadata.Idempotency that is not a mapping.
func (f *Function) Declared() (map[string]string, error) {
	n := Lookup(f.Metadata, MetadataKey)
	if n == nil {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		//lint:ignore ST1005 Metadata is the template's key, spelled as written
		return nil, fmt.Errorf("Metadata.%s is not a mapping", MetadataKey)
	}
	entries := map[string]string{}
	keys, values := Entries(n)
	for i, k := range keys {
		s, ok := f.t.String(values[i])
		if !ok {
			//lint:ignore ST1005 Metadata is the template's key, spelled as written
			return nil, fmt.Errorf("Metadata.%s.%s is not a string", MetadataKey, k)
		}
		entries[k] = s
	}
	return entries, nil
}

// Name returns the function's FunctionName when the template gives it as
// a string: its AWS_LAMBDA_FUNCTION_NAME once deployed.
func (f *Function) Name() (string, bool) {
	return f.t.String(f.Resource.Prop("FunctionName"))
}

// Idempotent reports whether the function keeps idempotency records, in
// any store the library has: it names a DynamoDB table in
// POWERTOOLS_IDEMPOTENCY_TABLE (github.com/gopowertools/lambda/dynamo), a
// Redis or Valkey server in REDIS_URL (redis.URLEnv, which its
// ClientFromEnv reads), or declares its settings in Metadata.
func (f *Function) Idempotent() bool {
	return f.Variable(TableEnv) != nil || f.Variable(redis.URLEnv) != nil || Lookup(f.Metadata, MetadataKey) != nil
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
