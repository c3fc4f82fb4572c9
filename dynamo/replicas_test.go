package dynamo

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// describer is a Client whose table DescribeTable describes as desc (or
// fails with err), and whose writes all succeed.
type describer struct {
	txClient
	desc  *types.TableDescription
	err   error
	calls int
}

func (c *describer) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	c.calls++
	if c.err != nil {
		return nil, c.err
	}
	return &dynamodb.DescribeTableOutput{Table: c.desc}, nil
}

func (c *describer) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return &dynamodb.PutItemOutput{}, nil
}

func replicas(regions ...string) []types.ReplicaDescription {
	var out []types.ReplicaDescription
	for _, r := range regions {
		out = append(out, types.ReplicaDescription{RegionName: aws.String(r)})
	}
	return out
}

func acquire(s *Store) error {
	now := time.Now()
	_, err := s.Acquire(context.Background(), &idempotency.Record{Key: "k", Status: idempotency.StatusInProgress, LeaseToken: "t", Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute)}, now)
	return err
}

// TestGlobalTables: the store works on a table of one Region and on a
// global table in strong consistency, and refuses one in eventual
// consistency unless told to accept it (docs/multi-region.md).
func TestGlobalTables(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		desc    *types.TableDescription
		accept  bool
		refused bool
		strong  bool
	}{
		{name: "one Region", desc: &types.TableDescription{}},
		{name: "a global table left with one replica", desc: &types.TableDescription{Replicas: replicas("us-east-1")}},
		{name: "eventual consistency", desc: &types.TableDescription{Replicas: replicas("us-east-1", "eu-west-1"), MultiRegionConsistency: types.MultiRegionConsistencyEventual}, refused: true},
		{name: "eventual consistency, the default", desc: &types.TableDescription{Replicas: replicas("us-east-1", "eu-west-1")}, refused: true},
		{name: "eventual consistency, accepted", desc: &types.TableDescription{Replicas: replicas("us-east-1", "eu-west-1")}, accept: true},
		{name: "legacy version 2017.11.29", desc: &types.TableDescription{GlobalTableVersion: aws.String("2017.11.29")}, refused: true},
		{name: "strong consistency", desc: &types.TableDescription{Replicas: replicas("us-east-1", "us-east-2"), MultiRegionConsistency: types.MultiRegionConsistencyStrong,
			GlobalTableWitnesses: []types.GlobalTableWitnessDescription{{RegionName: aws.String("us-west-2")}}}, strong: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := &describer{desc: tt.desc}
			s, err := New(client, func(o *Options) { o.TableName = "idem"; o.AcceptEventualGlobalTable = tt.accept })
			if err != nil {
				t.Fatal(err)
			}
			err = acquire(s)
			config, isConfig := errors.AsType[*idempotency.ConfigError](err)
			switch {
			case tt.refused && (!isConfig || config.Name != "dynamo.Options.AcceptEventualGlobalTable"):
				t.Fatalf("Acquire: %v, want a ConfigError naming AcceptEventualGlobalTable", err)
			case !tt.refused && err != nil:
				t.Fatalf("Acquire: %v", err)
			}
			// A table that passed is not described again; one refused is,
			// on each Acquire, until it passes.
			wantCalls := 1
			if tt.refused {
				wantCalls = 2
			}
			if err := acquire(s); (err != nil) != tt.refused || client.calls != wantCalls {
				t.Errorf("second Acquire: %v after %d DescribeTable, want the same answer after %d", err, client.calls, wantCalls)
			}
			ctx := s.StageWrites(context.Background())
			err = Stage(ctx, ledgerPut("s1"))
			if tt.strong != errors.Is(err, ErrNoTransactions) {
				t.Errorf("Stage: %v; want ErrNoTransactions only in strong consistency", err)
			}
		})
	}
}

// TestTableCheckFailures: a role that may not describe the table is
// refused with a ConfigError naming the permission, and asked again on
// the next Acquire, which finds a permission granted since; another
// failure fails that Acquire only.
func TestTableCheckFailures(t *testing.T) {
	t.Parallel()
	denied := &describer{err: &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized to perform: dynamodb:DescribeTable"}}
	s, err := New(denied, func(o *Options) { o.TableName = "idem" })
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if config, ok := errors.AsType[*idempotency.ConfigError](acquire(s)); !ok || config.Name != "dynamodb:DescribeTable" {
			t.Fatalf("Acquire: %v, want a ConfigError naming dynamodb:DescribeTable", config)
		}
	}
	if denied.calls != 2 {
		t.Errorf("%d DescribeTable, want 2: a refusal is asked again", denied.calls)
	}

	flaky := &describer{err: httpError(500, &smithy.GenericAPIError{Code: "InternalServerError"}), desc: &types.TableDescription{}}
	s, err = New(flaky, func(o *Options) { o.TableName = "idem" })
	if err != nil {
		t.Fatal(err)
	}
	if err := acquire(s); err == nil {
		t.Fatal("Acquire succeeded without the table's description")
	} else if _, ok := errors.AsType[*idempotency.ConfigError](err); ok {
		t.Fatalf("Acquire: %v, a server error taken for a configuration error", err)
	}
	flaky.err = nil
	if err := acquire(s); err != nil || flaky.calls != 2 {
		t.Errorf("Acquire after the server recovered: %v after %d DescribeTable, want success after 2", err, flaky.calls)
	}
}

// TestClientWithoutDescribeTable: a Client without DescribeTable (a test
// double) is taken for a table of one Region.
func TestClientWithoutDescribeTable(t *testing.T) {
	t.Parallel()
	s, err := New(&txClient{Client: writesOK{}}, func(o *Options) { o.TableName = "idem" })
	if err != nil {
		t.Fatal(err)
	}
	if err := acquire(s); err != nil {
		t.Fatal(err)
	}
}

type writesOK struct{ Client }

func (writesOK) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return &dynamodb.PutItemOutput{}, nil
}

// TestTableCheckOnServers: moto and dynalite describe a table of one
// Region (no replicas, no consistency mode): the store works on it, and
// reads the description once.
func TestTableCheckOnServers(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			var reqs requests
			s := newStore(t, srv.client(t, reqs.option))
			reqs.take()
			for range 2 {
				if err := acquire(s); err != nil {
					t.Fatal(err)
				}
			}
			if n := reqs.take()["DescribeTable"]; n != 1 {
				t.Errorf("%d DescribeTable for two Acquires, want 1", n)
			}
			if s.strong.Load() {
				t.Error("a table of one Region taken for a strongly consistent global table")
			}
		})
	}
}

// deniedPuts is a describer that counts its PutItem requests.
type deniedPuts struct {
	describer
	puts int
}

func (c *deniedPuts) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.puts++
	return &dynamodb.PutItemOutput{}, nil
}

// TestDescribeTableDeniedIsAConfigError: a handler whose role may not
// describe its table fails its first invocation, before any record is
// written, with a *ConfigError alone (docs/errors.md: no failure matches
// two types), naming the permission to grant; not a *PersistenceError,
// whose advice is to retry.
func TestDescribeTableDeniedIsAConfigError(t *testing.T) {
	t.Parallel()
	client := &deniedPuts{describer: describer{err: &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized to perform: dynamodb:DescribeTable"}}}
	s, err := New(client, func(o *Options) { o.TableName = "idem" })
	if err != nil {
		t.Fatal(err)
	}
	var outcome idempotency.Outcome
	h := idempotency.Wrap(s, func(context.Context, map[string]any) (string, error) { return "ran", nil },
		idempotency.WithKeyPrefix("fn"), idempotency.WithLogger(slog.New(slog.DiscardHandler)),
		idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) { outcome = o.Outcome }))
	_, err = h.Invoke(context.Background(), []byte(`{"order_id":"o-1"}`))
	config, isConfig := errors.AsType[*idempotency.ConfigError](err)
	_, isPersistence := errors.AsType[*idempotency.PersistenceError](err)
	if !isConfig || isPersistence || config.Name != "dynamodb:DescribeTable" {
		t.Fatalf("Invoke: %v (ConfigError %v, PersistenceError %v), want a *ConfigError naming dynamodb:DescribeTable, and only that", err, isConfig, isPersistence)
	}
	if !strings.Contains(err.Error(), "grant dynamodb:DescribeTable") {
		t.Errorf("the error does not name the permission to grant: %v", err)
	}
	if client.puts != 0 || outcome != idempotency.OutcomeStoreError {
		t.Errorf("%d PutItem, outcome %s: want no record written, and the outcome store_error", client.puts, outcome)
	}
}
