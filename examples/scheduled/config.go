package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

const (
	// defaultLockExpiry outlasts any Lambda timeout (15 minutes at most)
	// and its abandon grace; under AbandonBlock it is how long a dead run
	// keeps the job from running.
	defaultLockExpiry = time.Hour
	// defaultTickExpiry outlasts every retry of a tick: EventBridge
	// Scheduler retries one for 24 hours at most, and Lambda keeps an
	// asynchronous event for 6 hours at most (both their defaults).
	defaultTickExpiry = 30 * time.Hour
)

// Config is the function's own settings; the middleware reads its own
// (POWERTOOLS_IDEMPOTENCY_*) from the environment.
type Config struct {
	// Job is the job of an event that names none (JOB_NAME): an
	// EventBridge scheduled rule's event.
	Job string
	// LockExpiry is how long the job lock can be held
	// (JOB_LOCK_EXPIRES_AFTER): it must exceed the function's timeout plus
	// [idempotency.AbandonGrace], which every invocation checks. Zero
	// means the default, an hour.
	LockExpiry time.Duration
}

// newAppFromEnv builds the function from its environment.
func newAppFromEnv(ctx context.Context, log *slog.Logger) (*App, error) {
	table := os.Getenv("POWERTOOLS_IDEMPOTENCY_TABLE")
	if table == "" {
		return nil, errors.New("POWERTOOLS_IDEMPOTENCY_TABLE is not set")
	}
	jobsURL := os.Getenv("JOB_SERVICE_URL")
	if u, err := url.Parse(jobsURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("JOB_SERVICE_URL=%q is not an http(s) URL", jobsURL)
	}
	cfg := Config{Job: os.Getenv("JOB_NAME"), LockExpiry: defaultLockExpiry}
	if v := os.Getenv("JOB_LOCK_EXPIRES_AFTER"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= idempotency.AbandonGrace {
			return nil, fmt.Errorf("JOB_LOCK_EXPIRES_AFTER=%q is not a Go duration longer than the function's timeout plus %v, such as 1h", v, idempotency.AbandonGrace)
		}
		cfg.LockExpiry = d
	}

	awsCfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	store, err := dynamo.New(dynamodb.NewFromConfig(awsCfg), func(o *dynamo.Options) { o.TableName = table })
	if err != nil {
		return nil, err
	}
	jobs := &JobClient{BaseURL: strings.TrimSuffix(jobsURL, "/"), HTTP: http.DefaultClient}
	return NewApp(store, jobs, cfg, log, idempotency.WithLogger(log))
}
