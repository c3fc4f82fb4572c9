package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/internal/redismode"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/redis"
	goredis "github.com/redis/go-redis/v9"
)

// The values of --store.
const (
	storeDynamoDB = "dynamodb"
	storeRedis    = "redis"
)

const storeAbout = `The store is DynamoDB (--store dynamodb, the default), through the SDK's
AWS configuration, or Redis or Valkey (--store redis): the server whose URL
is --redis-url, else the function's REDIS_URL, else this command's, as
go-redis reads it
(redis://[user:password@]host:port[/db], rediss:// for TLS), a node of a
Redis Cluster with --cluster. Its records are the hashes at the keys that
start with --redis-key-prefix (redis.Options.KeyPrefix).
`

// storeFlags name the store of the records, for inspect, list, forget and
// resolve.
type storeFlags struct {
	kind      string // --store; "" until the flags or the function say
	table     string
	redisURL  string
	cluster   bool
	keyPrefix string
	// unresolved and unresolvedURL say why the function's table or
	// Redis URL is not known: what its template gives that the command
	// cannot resolve.
	unresolved, unresolvedURL string
}

// register registers the flags; --table with its default and usage, which
// differ between list and the commands about one record.
func (f *storeFlags) register(fs *flag.FlagSet, tableDefault, tableUsage string) {
	fs.StringVar(&f.kind, "store", "", "the `store` of the records: dynamodb, or redis (Redis or Valkey) (default: redis for a function whose template names a Redis server and no table, else dynamodb)")
	fs.StringVar(&f.table, "table", tableDefault, tableUsage)
	fs.StringVar(&f.redisURL, "redis-url", "", "with --store redis, the server's `URL`, redis://[user:password@]host:port[/db] or rediss:// (default: $REDIS_URL)")
	fs.BoolVar(&f.cluster, "cluster", false, "with --store redis, the URL names a node of a Redis Cluster, or its configuration endpoint")
	fs.StringVar(&f.keyPrefix, "redis-key-prefix", redis.DefaultKeyPrefix, "with --store redis, the `prefix` of the records' Redis keys (redis.Options.KeyPrefix)")
}

// check refuses, after fs is parsed, a --store it does not know and the
// flags of the other store, which would be ignored.
func (f *storeFlags) check(fs *flag.FlagSet) error {
	if f.kind != "" && f.kind != storeDynamoDB && f.kind != storeRedis {
		return fmt.Errorf("--store %q: want dynamodb or redis", f.kind)
	}
	var table, redisFlag string
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "table":
			table = fl.Name
		case "redis-url", "cluster", "redis-key-prefix":
			redisFlag = fl.Name
		}
	})
	switch {
	case table != "" && redisFlag != "":
		return fmt.Errorf("--table and --%s name two stores: give the flags of one", redisFlag)
	case f.kind == storeDynamoDB && redisFlag != "":
		return fmt.Errorf("--%s goes with --store redis", redisFlag)
	case f.kind == storeRedis && table != "":
		return errors.New("--table goes with --store dynamodb: with --store redis, the records are on the server of --redis-url")
	case f.kind == "" && redisFlag != "":
		f.kind = storeRedis
	case f.kind == "" && table != "":
		f.kind = storeDynamoDB
	}
	return nil
}

// recordStore is what the record commands need of a store: the
// middleware's requests (to compute keys as the function does, read and
// complete records) and the operator's, which *dynamo.Store and
// *redis.Store both have.
type recordStore interface {
	idempotency.Store
	// Delete deletes the record when it still has rec's status and lease
	// token, else returns idempotency.ErrLeaseLost.
	Delete(ctx context.Context, rec *idempotency.Record) error
	// DeleteCorrupted deletes the record of key that cannot be read, if
	// it still cannot, else returns idempotency.ErrLeaseLost.
	DeleteCorrupted(ctx context.Context, key string) error
	// scan reads the records page by page, with status when it is not
	// empty.
	scan(ctx context.Context, status idempotency.Status) iter.Seq2[*page, error]
	// scanned names what page.Scanned counts, in the singular and the
	// plural: DynamoDB's items, or Redis's keys.
	scanned() (one, many string)
	// close ends the store's connections.
	close()
}

// page is one page of a scan: a dynamo.Page, or a redis.Page.
type page struct {
	Records   []*idempotency.Record
	Corrupted []error
	Scanned   int
}

// dynamoStore is a table's store; each error of its requests says which
// table, in which region, at which endpoint.
type dynamoStore struct {
	*dynamo.Store
	where string
}

func (s dynamoStore) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	rec, err := s.Store.Get(ctx, key)
	return rec, s.at(err)
}

func (s dynamoStore) Delete(ctx context.Context, rec *idempotency.Record) error {
	return s.at(s.Store.Delete(ctx, rec))
}

func (s dynamoStore) DeleteCorrupted(ctx context.Context, key string) error {
	return s.at(s.Store.DeleteCorrupted(ctx, key))
}

func (s dynamoStore) Reclaim(ctx context.Context, rec *idempotency.Record, token string) error {
	return s.at(s.Store.Reclaim(ctx, rec, token))
}

func (s dynamoStore) scan(ctx context.Context, status idempotency.Status) iter.Seq2[*page, error] {
	return func(yield func(*page, error) bool) {
		for p, err := range s.Scan(ctx, status) {
			if !yield((*page)(p), s.at(err)) {
				return
			}
		}
	}
}

// at adds to err, when not nil, where the request went.
func (s dynamoStore) at(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", s.where, err)
}

func (dynamoStore) scanned() (string, string) { return "item", "items" }

func (dynamoStore) close() {}

type redisStore struct {
	*redis.Store
	client goredis.UniversalClient
}

func (s redisStore) scan(ctx context.Context, status idempotency.Status) iter.Seq2[*page, error] {
	return func(yield func(*page, error) bool) {
		for p, err := range s.Scan(ctx, status) {
			if !yield((*page)(p), err) {
				return
			}
		}
	}
}

func (redisStore) scanned() (string, string) { return "key", "keys" }

func (s redisStore) close() { s.client.Close() }

// open returns the store that f names. The caller closes it.
func (c *cli) open(ctx context.Context, f *storeFlags) (recordStore, error) {
	if c.openStore != nil {
		return c.openStore(f)
	}
	if f.kind == storeRedis {
		return c.openRedis(f)
	}
	if f.table == "" {
		why := "the function names none"
		if f.unresolved != "" {
			why = f.unresolved
		}
		return nil, fmt.Errorf("no table: %s; give --table, the deployed table's name, or set %s", why, template.TableEnv)
	}
	// The SDK's default configuration: the endpoint from
	// AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL, say.
	cfg, err := c.awsConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	client := dynamodb.NewFromConfig(cfg)
	where, err := awsPlace("table "+printable(f.table), client.Options().Region, client.Options().BaseEndpoint)
	if err != nil {
		return nil, err
	}
	s, err := dynamo.New(client, func(o *dynamo.Options) { o.TableName = f.table })
	if err != nil {
		return nil, err
	}
	return dynamoStore{s, where}, nil
}

// awsPlace names where the requests about what go: "table orders in
// eu-west-1 at http://127.0.0.1:4566", the endpoint only when one is set
// (else the region's). A configuration without a region is refused
// before any request, which would otherwise go nowhere sensible.
func awsPlace(what, region string, endpoint *string) (string, error) {
	at := ""
	if e := aws.ToString(endpoint); e != "" {
		at = " at " + e
	}
	if region == "" {
		return "", fmt.Errorf("%s%s: no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION), or a region in the profile", what, at)
	}
	return fmt.Sprintf("%s in %s%s", what, region, at), nil
}

func (c *cli) openRedis(f *storeFlags) (recordStore, error) {
	raw := f.redisURL
	if raw == "" {
		raw = c.getenv(redis.URLEnv)
	}
	if raw == "" {
		why := ""
		if f.unresolvedURL != "" {
			why = ": " + f.unresolvedURL
		}
		return nil, fmt.Errorf("no Redis URL%s; give --redis-url, or set REDIS_URL", why)
	}
	client, err := c.redisClient(raw, f.cluster)
	if err != nil {
		return nil, fmt.Errorf("--redis-url (or REDIS_URL): %w", err)
	}
	s, err := redis.New(client, func(o *redis.Options) {
		o.KeyPrefix = f.keyPrefix
		if c.scanCount > 0 {
			o.ScanCount = c.scanCount
		}
	})
	if err != nil {
		client.Close()
		return nil, err
	}
	return redisStore{s, client}, nil
}

// newRedisClient returns a client for the server at rawURL, or for the
// cluster that the node at rawURL belongs to, as go-redis reads the URL
// (goredis.ParseURL, goredis.ParseClusterURL). Without cluster, it asks the
// server its mode (one HELLO) and makes a cluster client for a cluster
// node, as cluster would have.
func newRedisClient(rawURL string, cluster bool) (goredis.UniversalClient, error) {
	if cluster {
		opt, err := goredis.ParseClusterURL(rawURL)
		if err != nil {
			return nil, urlError(err)
		}
		return goredis.NewClusterClient(opt), nil
	}
	opt, err := goredis.ParseURL(rawURL)
	if err != nil {
		return nil, urlError(err)
	}
	// A node of a cluster holds only its own slots' keys: an operator who
	// gives one node's URL means the cluster, and gets every primary.
	client := goredis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), opt.DialTimeout+opt.ReadTimeout)
	defer cancel()
	if mode, err := redismode.Of(ctx, client); err != nil || mode != redismode.Cluster {
		return client, nil // a server that cannot be reached says so at its first command
	}
	client.Close()
	copt, err := goredis.ParseClusterURL(rawURL)
	if err != nil {
		return nil, urlError(err)
	}
	return goredis.NewClusterClient(copt), nil
}

// urlError is a URL's parse error without the URL, which url.Parse's
// errors quote, password included.
func urlError(err error) error {
	if urlErr, ok := errors.AsType[*url.Error](err); ok {
		err = urlErr.Err
	}
	return fmt.Errorf("not a Redis URL: %w", err)
}
