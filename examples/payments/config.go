package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

const defaultProviderTimeout = 5 * time.Second

// newAppFromEnv builds the function from its environment.
func newAppFromEnv(ctx context.Context, log *slog.Logger) (*App, error) {
	table := os.Getenv("POWERTOOLS_IDEMPOTENCY_TABLE")
	if table == "" {
		return nil, errors.New("POWERTOOLS_IDEMPOTENCY_TABLE is not set")
	}
	providerURL := os.Getenv("PAYMENT_PROVIDER_URL")
	if providerURL == "" {
		return nil, errors.New("PAYMENT_PROVIDER_URL is not set")
	}
	timeout := defaultProviderTimeout
	if v := os.Getenv("PAYMENT_PROVIDER_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("PAYMENT_PROVIDER_TIMEOUT=%q is not a positive Go duration such as 5s", v)
		}
		timeout = d
	}

	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	store, err := dynamo.New(dynamodb.NewFromConfig(cfg), func(o *dynamo.Options) {
		o.TableName = table
	})
	if err != nil {
		return nil, err
	}
	provider := &ProviderClient{BaseURL: providerURL, Timeout: timeout, HTTP: http.DefaultClient}
	return NewApp(store, provider, log, appOptions(log)...)
}

// appOptions is the middleware's configuration. The key is required: a
// payment whose key path selects nothing (a typo in the template's path,
// say) must fail rather than charge without idempotency.
func appOptions(log *slog.Logger) []idempotency.Option {
	return append(keyPathOptions(), idempotency.WithKeyRequired(true), idempotency.WithLogger(log))
}

// keyPathOptions gives the function's key paths as defaults: template.yaml
// sets them per function through the environment, which overrides them
// (TestKeyPathsInTemplate checks that the two agree); a local run uses
// these.
func keyPathOptions() []idempotency.Option {
	return []idempotency.Option{idempotency.WithDefaults(
		idempotency.WithEventKey(eventKeyPath),
		idempotency.WithPayloadValidation(validationPath),
	)}
}
