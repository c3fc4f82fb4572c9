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
)

const defaultFulfilmentTimeout = 5 * time.Second

// newAppFromEnv builds the function from its environment.
func newAppFromEnv(ctx context.Context, log *slog.Logger) (*App, error) {
	table := os.Getenv("POWERTOOLS_IDEMPOTENCY_TABLE")
	if table == "" {
		return nil, errors.New("POWERTOOLS_IDEMPOTENCY_TABLE is not set")
	}
	baseURL := os.Getenv("FULFILMENT_URL")
	if baseURL == "" {
		return nil, errors.New("FULFILMENT_URL is not set")
	}
	timeout := defaultFulfilmentTimeout
	if v := os.Getenv("FULFILMENT_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("FULFILMENT_TIMEOUT=%q is not a positive Go duration such as 5s", v)
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
	client := &FulfilmentClient{BaseURL: baseURL, Timeout: timeout, HTTP: http.DefaultClient}
	return NewApp(store, client, log)
}
