// Package testenv finds the real servers and shared test data that the
// project's tests use. `make test` starts the servers and exports their
// addresses; a test run without them skips those tests with a clear message,
// except under CI (CI=true), where a missing server is a failure.
package testenv

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Environment variables set by `make test` (see scripts/with-servers.sh).
const (
	MotoEnv     = "TEST_MOTO_ENDPOINT"     // moto server: ALL_OLD, transactions, TTL API
	DynaliteEnv = "TEST_DYNALITE_ENDPOINT" // dynalite: no ALL_OLD, no transactions
)

// CI reports whether the tests run under CI, where nothing may be skipped
// for want of a server or of test data.
func CI() bool { return os.Getenv("CI") == "true" }

// Unavailable skips the test, or fails it under CI, because what it needs is
// missing.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if CI() {
		t.Fatalf("CI=true and "+format, args...)
	}
	t.Skipf(format+" (run `make test` to get it)", args...)
}

// Endpoint returns the URL in the environment variable name, or skips.
func Endpoint(t testing.TB, name string) string {
	t.Helper()
	u := os.Getenv(name)
	if u == "" {
		Unavailable(t, "%s is not set: no server", name)
	}
	return u
}

// DynamoDB returns a client for the server whose URL is in the
// environment variable name (MotoEnv or DynaliteEnv), with static test
// credentials, or skips.
func DynamoDB(t testing.TB, name string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	t.Helper()
	return NewDynamoDB(Endpoint(t, name), optFns...)
}

// NewDynamoDB returns a client for the DynamoDB-compatible server at url.
func NewDynamoDB(url string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	cfg := aws.Config{
		Region: "us-east-1",
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test", Source: "testenv"}, nil
		}),
	}
	return dynamodb.NewFromConfig(cfg, append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(url)
	}}, optFns...)...)
}

// RepoRoot returns the repository's top folder.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// SharedDir returns ../shared/<rel> beside the repository, or skips (fails
// under CI) when it is absent, as in a user's clone.
func SharedDir(t testing.TB, rel string) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(), "..", "shared", rel)
	if _, err := os.Stat(dir); err != nil {
		Unavailable(t, "%s is absent: it lives in the project's shared folder beside the repository, not in a user's clone", dir)
	}
	return dir
}
