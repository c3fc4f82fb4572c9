package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// newAppFromEnv builds the function from its environment.
func newAppFromEnv(ctx context.Context, log *slog.Logger) (*App, error) {
	table := os.Getenv("POWERTOOLS_IDEMPOTENCY_TABLE")
	if table == "" {
		return nil, errors.New("POWERTOOLS_IDEMPOTENCY_TABLE is not set")
	}
	ledger := os.Getenv("LEDGER_TABLE")
	if ledger == "" {
		return nil, errors.New("LEDGER_TABLE is not set")
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	store, err := dynamo.New(dynamodb.NewFromConfig(cfg), func(o *dynamo.Options) { o.TableName = table })
	if err != nil {
		return nil, err
	}
	return NewApp(store, ledger, log, appOptions(log)...)
}

// appOptions is the middleware's configuration: the key is the settlement
// id, required (a settlement without one must fail, not pay without
// idempotency), and a retry must carry the same account and amount. The
// template sets the paths through the environment, which overrides these
// defaults (a test checks that the two agree).
func appOptions(log *slog.Logger) []idempotency.Option {
	return []idempotency.Option{
		idempotency.WithKeyRequired(true), idempotency.WithLogger(log),
		idempotency.WithDefaults(idempotency.WithEventKey(eventKeyPath), idempotency.WithPayloadValidation(validationPath)),
	}
}
