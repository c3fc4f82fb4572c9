package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/redis"
	goredis "github.com/redis/go-redis/v9"
)

// The models checked against the real servers: the same operations,
// drawn from seeds, run on the model and on moto, dynalite and Valkey,
// through the real dynamo.Store and redis.Store, give the same
// answers and leave the same records. What no server can show (global
// tables, TTL's lag, a failover) follows AWS's and Redis's documentation,
// cited where it is modelled.

// differentialSeeds is how many operation sequences each server runs.
const differentialSeeds = 8

// op is one operation of a sequence: what it did, as a line to compare.
type op func(ctx context.Context, s idempotency.Store) string

// operations draws a sequence of store operations on a few keys and
// tokens, with times around base, so that records are live, expired and
// taken over. staged adds commits of staged writes (an Invoker store).
func operations(seed uint64, base time.Time, staged bool) []op {
	keys := keysOfSeed(seed)
	r := rand.New(rand.NewPCG(seed, 0xd1ff))
	at := func() time.Time { return base.Add(time.Duration(r.IntN(12000)-6000) * time.Millisecond) }
	key := func() string { return keys[r.IntN(len(keys))] }
	token := func() string { return fmt.Sprintf("t%d", r.IntN(4)) }
	record := func(status idempotency.Status) *idempotency.Record {
		rec := &idempotency.Record{Key: key(), Status: status, LeaseToken: token(), Expiry: at()}
		switch status {
		case idempotency.StatusInProgress:
			if r.IntN(5) > 0 {
				rec.LeaseEnd = at()
			}
			if r.IntN(4) == 0 {
				rec.Deadline = at()
			}
		case idempotency.StatusComplete:
			rec.Response = fmt.Appendf(nil, `{"n":%d}`, r.IntN(100))
			rec.CompletedAt = at()
			rec.ResponseOmitted = r.IntN(10) == 0
		}
		if r.IntN(2) == 0 {
			rec.PayloadHash = fmt.Sprintf("h%d", r.IntN(2))
		}
		return rec
	}
	var ops []op
	for range 40 {
		switch x := r.IntN(12); {
		case x < 4:
			rec, now := record(idempotency.StatusInProgress), at()
			ops = append(ops, func(ctx context.Context, s idempotency.Store) string {
				existing, err := s.Acquire(ctx, rec, now)
				return fmt.Sprintf("Acquire %s %s: %s %s", rec.Key, rec.LeaseToken, describeRecord(existing), errClass(err))
			})
		case x < 6:
			rec := record(idempotency.StatusComplete)
			ops = append(ops, func(ctx context.Context, s idempotency.Store) string {
				return fmt.Sprintf("Complete %s %s: %s", rec.Key, rec.LeaseToken, errClass(s.Complete(ctx, rec)))
			})
		case x < 7:
			rec := record(idempotency.StatusUncertain)
			ops = append(ops, func(ctx context.Context, s idempotency.Store) string {
				return fmt.Sprintf("MarkUncertain %s %s: %s", rec.Key, rec.LeaseToken, errClass(s.MarkUncertain(ctx, rec)))
			})
		case x < 8:
			k, tok := key(), token()
			ops = append(ops, func(ctx context.Context, s idempotency.Store) string {
				return fmt.Sprintf("Release %s %s: %s", k, tok, errClass(s.Release(ctx, k, tok)))
			})
		case x < 9:
			rec, read := record(idempotency.StatusUncertain), token()
			rec.LeaseEnd = at()
			ops = append(ops, func(ctx context.Context, s idempotency.Store) string {
				return fmt.Sprintf("Reclaim %s %s over %s: %s", rec.Key, rec.LeaseToken, read, errClass(s.Reclaim(ctx, rec, read)))
			})
		case x < 10 && staged:
			rec := record(idempotency.StatusComplete)
			effect := fmt.Sprintf("e%d", r.IntN(1000))
			ops = append(ops, func(ctx context.Context, s idempotency.Store) string {
				ds := s.(*dynamo.Store)
				ctx = ds.StageWrites(ctx)
				if err := dynamo.Stage(ctx, types.TransactWriteItem{Put: &types.Put{
					TableName: aws.String(effectsTableOf(ctx)),
					Item:      map[string]types.AttributeValue{keyAttr: &types.AttributeValueMemberS{Value: effect}},
				}}); err != nil {
					return "Stage: " + errClass(err)
				}
				return fmt.Sprintf("Complete with a staged write %s %s: %s", rec.Key, rec.LeaseToken, errClass(s.Complete(ctx, rec)))
			})
		default:
			k := key()
			ops = append(ops, func(ctx context.Context, s idempotency.Store) string {
				got, err := s.Get(ctx, k)
				return fmt.Sprintf("Get %s: %s %s", k, describeRecord(got), errClass(err))
			})
		}
	}
	return ops
}

// keysOfSeed are the keys a sequence works on: its own, so that the
// sequences can share a table.
func keysOfSeed(seed uint64) []string {
	return []string{fmt.Sprintf("diff%d#0", seed), fmt.Sprintf("diff%d#1", seed), fmt.Sprintf("diff%d#2", seed)}
}

// effectsTableKey carries the name of the staged writes' table.
type effectsTableKey struct{}

func effectsTableOf(ctx context.Context) string { return ctx.Value(effectsTableKey{}).(string) }

func describeRecord(r *idempotency.Record) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("{%s %s exp=%d lease=%d deadline=%d resp=%q omitted=%v hash=%s done=%d}", r.Status, r.LeaseToken,
		unix(r.Expiry, time.Second), unix(r.LeaseEnd, time.Millisecond), unix(r.Deadline, time.Millisecond),
		r.Response, r.ResponseOmitted, r.PayloadHash, unix(r.CompletedAt, time.Millisecond))
}

func unix(t time.Time, unit time.Duration) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano() / int64(unit)
}

// errClass is what an answer means to the middleware.
func errClass(err error) string {
	var commit *idempotency.CommitError
	var corrupted *idempotency.CorruptedRecordError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, new(*ttlNote)):
		return err.Error()
	case errors.As(err, &commit):
		return "commit " + commit.State.String()
	case errors.As(err, &corrupted):
		return "corrupted"
	case errors.Is(err, idempotency.ErrLeaseLost):
		return "lease lost" + ttlOf(err)
	case errors.Is(err, idempotency.ErrRecordNotFound):
		return "not found"
	case errors.Is(err, idempotency.ErrRecordTooLarge):
		return "too large"
	}
	return "error: " + err.Error()
}

// ttlOf is the TTL withTTL wrote after an error's text.
func ttlOf(err error) string {
	if _, ttl, ok := strings.Cut(err.Error(), " ttl "); ok {
		return " ttl " + ttl
	}
	return ""
}

// modelClient is the DynamoDB model as a dynamo.Client, with no world
// around it: each request applied at once, at the real time.
type modelClient struct{ db *database }

func (c *modelClient) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if _, err := c.db.putItem(in, time.Now()); err != nil {
		return nil, sdkError("PutItem", err)
	}
	return &dynamodb.PutItemOutput{}, nil
}

func (c *modelClient) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if _, err := c.db.deleteItem(in, time.Now()); err != nil {
		return nil, sdkError("DeleteItem", err)
	}
	return &dynamodb.DeleteItemOutput{}, nil
}

func (c *modelClient) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := c.db.getItem(in)
	if err != nil {
		return nil, sdkError("GetItem", err)
	}
	return out, nil
}

func (c *modelClient) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if _, err := c.db.transactWithToken(in, time.Now(), 0); err != nil {
		return nil, sdkError("TransactWriteItems", err)
	}
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

func sdkError(op string, err error) error {
	return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: op, Err: serverError(err, 400)}
}

// createTable makes a table keyed on the S attribute id on client.
func createTable(t *testing.T, client *dynamodb.Client, name string) {
	t.Helper()
	ctx := t.Context()
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(keyAttr), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(keyAttr), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatal(err)
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 50 * time.Millisecond })
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
}

// TestDynamoModelAgainstServers runs each sequence on dynamo.Store over
// the model and over moto (with transactions) and dynalite (which has
// none, and does not return the item of a failed condition: the store
// reads it back, and must answer the same).
func TestDynamoModelAgainstServers(t *testing.T) {
	t.Parallel()
	for _, srv := range []struct {
		name, env string
		staged    bool
	}{{"moto", testenv.MotoEnv, true}, {"dynalite", testenv.DynaliteEnv, false}} {
		t.Run(srv.name, func(t *testing.T) {
			client := testenv.DynamoDB(t, srv.env)
			records := fmt.Sprintf("diff-%s-%d", srv.name, time.Now().UnixNano())
			effects := records + "-effects"
			createTable(t, client, records)
			createTable(t, client, effects)
			real, err := dynamo.New(client, func(o *dynamo.Options) { o.TableName = records })
			if err != nil {
				t.Fatal(err)
			}
			model, err := dynamo.New(&modelClient{db: newDatabase(records, effects)}, func(o *dynamo.Options) { o.TableName = records })
			if err != nil {
				t.Fatal(err)
			}
			for seed := uint64(1); seed <= differentialSeeds; seed++ {
				ctx := context.WithValue(t.Context(), effectsTableKey{}, effects)
				compare(t, seed, operations(seed, time.Now().Truncate(time.Second), srv.staged), ctx, model, real)
			}
		})
	}
}

// TestRedisModelAgainstValkey runs each sequence on the real redis.Store,
// through go-redis, on the modelled server (its scripts run by
// gopher-lua) and on Valkey: the same answers, the same records, and the
// same TTL on each key, to the time between the two requests that read
// it.
func TestRedisModelAgainstValkey(t *testing.T) {
	t.Parallel()
	addr := os.Getenv("TEST_VALKEY_ADDR")
	if addr == "" {
		testenv.Unavailable(t, "TEST_VALKEY_ADDR is not set: no Valkey server")
	}
	valkey := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { valkey.Close() })
	srv := newRedisServer(map[string]*redisHash{}, time.Now)
	model := goredis.NewClient(&goredis.Options{Addr: redisAddr.String(),
		Dialer: func(context.Context, string, string) (net.Conn, error) { return &redisConn{srv: srv}, nil }})
	t.Cleanup(func() { model.Close() })
	for seed := uint64(1); seed <= differentialSeeds; seed++ {
		prefix := fmt.Sprintf("diff:%d:%d:", seed, time.Now().UnixNano())
		stores := [2]idempotency.Store{}
		for i, c := range []*goredis.Client{model, valkey} {
			s, err := redis.New(c, func(o *redis.Options) { o.KeyPrefix = prefix })
			if err != nil {
				t.Fatal(err)
			}
			stores[i] = &withTTL{Store: s, client: c, key: prefix}
		}
		compare(t, seed, operations(seed, time.Now().Truncate(time.Second), false), t.Context(), stores[0], stores[1])
	}
}

// withTTL is a redis.Store whose answers carry the TTL the server gave
// the key, in milliseconds: what a differential test compares.
type withTTL struct {
	idempotency.Store
	client *goredis.Client
	key    string
}

func (s *withTTL) ttl(ctx context.Context, key string) string {
	ms, err := s.client.PTTL(ctx, s.key+key).Result()
	if err != nil {
		return "ttl error: " + err.Error()
	}
	if ms < 0 {
		return fmt.Sprintf(" ttl %d", int64(ms)) // -1: none, -2: no key
	}
	return fmt.Sprintf(" ttl %dms", ms.Milliseconds())
}

// ttlTolerance is how far the TTLs of one key on the two servers may
// differ: the time between the two requests that read them.
const ttlTolerance = 250 * time.Millisecond

// sameAnswer reports whether two answers agree: word for word, but for
// their TTLs, which must agree within ttlTolerance.
func sameAnswer(a, b string) bool {
	wa, wb := strings.Fields(a), strings.Fields(b)
	if len(wa) != len(wb) {
		return false
	}
	for i := range wa {
		if wa[i] == wb[i] {
			continue
		}
		da, errA := time.ParseDuration(wa[i])
		db, errB := time.ParseDuration(wb[i])
		if errA != nil || errB != nil || i == 0 || wa[i-1] != "ttl" || (da-db).Abs() > ttlTolerance {
			return false
		}
	}
	return true
}

func (s *withTTL) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	existing, err := s.Store.Acquire(ctx, rec, now)
	return existing, ttlError(err, s.ttl(ctx, rec.Key))
}

func (s *withTTL) Complete(ctx context.Context, rec *idempotency.Record) error {
	return ttlError(s.Store.Complete(ctx, rec), s.ttl(ctx, rec.Key))
}

func (s *withTTL) MarkUncertain(ctx context.Context, rec *idempotency.Record) error {
	return ttlError(s.Store.MarkUncertain(ctx, rec), s.ttl(ctx, rec.Key))
}

func (s *withTTL) Reclaim(ctx context.Context, rec *idempotency.Record, token string) error {
	return ttlError(s.Store.Reclaim(ctx, rec, token), s.ttl(ctx, rec.Key))
}

func (s *withTTL) Release(ctx context.Context, key, token string) error {
	return ttlError(s.Store.Release(ctx, key, token), s.ttl(ctx, key))
}

// ttlError carries ttl in err, or is an error made of it: errClass
// writes it into the line compared.
func ttlError(err error, ttl string) error {
	if err == nil {
		return &ttlNote{ttl: ttl}
	}
	return fmt.Errorf("%w%s", err, ttl)
}

type ttlNote struct{ ttl string }

func (n *ttlNote) Error() string { return "ok" + n.ttl }

// compare runs ops on model and real, and fails on the first answer in
// which they differ, or when they leave different records.
func compare(t *testing.T, seed uint64, ops []op, ctx context.Context, model, real idempotency.Store) {
	t.Helper()
	var log []string
	for i, o := range ops {
		m, r := o(ctx, model), o(ctx, real)
		log = append(log, r)
		if !sameAnswer(m, r) {
			t.Fatalf("seed %d, operation %d: the model answered\n\t%s\nthe server\n\t%s\nafter\n\t%s", seed, i, m, r, strings.Join(log[:i], "\n\t"))
		}
	}
	answers := map[string]int{}
	for _, line := range log {
		_, a, _ := strings.Cut(line, ": ")
		answers[strings.Fields(a + " x")[0]]++
	}
	t.Logf("seed %d: %d operations agree; answers %v", seed, len(ops), answers)
	for _, key := range keysOfSeed(seed) {
		m, mErr := model.Get(ctx, key)
		r, rErr := real.Get(ctx, key)
		if describeRecord(m)+errClass(mErr) != describeRecord(r)+errClass(rErr) {
			t.Fatalf("seed %d: %s is %s %s on the model, %s %s on the server", seed, key, describeRecord(m), errClass(mErr), describeRecord(r), errClass(rErr))
		}
	}
}

// TestDynamoModelRawRequests: requests the store never sends in these
// shapes, but whose answer the model must give as the servers do: the
// item size limit, DynamoDB's refusal of an unused placeholder, and a
// comparison with an attribute the item lacks.
func TestDynamoModelRawRequests(t *testing.T) {
	t.Parallel()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	puts := []struct {
		name string
		in   dynamodb.PutItemInput
		// differs names a server known to answer otherwise than
		// DynamoDB, whose answer the model gives.
		differs string
	}{
		{name: "over 400 KB", in: dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"id": s("big"), "data": s(strings.Repeat("x", 410*1024))}}},
		{name: "under 400 KB", in: dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"id": s("fits"), "data": s(strings.Repeat("x", 390*1024))}}},
		{name: "an unused value", in: dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"id": s("a")},
			ConditionExpression:       aws.String("attribute_not_exists(#id)"),
			ExpressionAttributeNames:  map[string]string{"#id": "id"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":x": s("x")}},
			// DynamoDB answers ValidationException "Value provided in
			// ExpressionAttributeValues unused in expressions", as
			// dynalite does; moto's PutItem does not check
			// (github.com/getmoto/moto/issues/8474 for its Query).
			differs: "moto"},
		{name: "a new item", in: dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"id": s("b"), "e": n("10")},
			ConditionExpression:      aws.String("attribute_not_exists(#id)"),
			ExpressionAttributeNames: map[string]string{"#id": "id"}}},
		{name: "not equal to a missing attribute", in: dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"id": s("b"), "e": n("10")},
			ConditionExpression:       aws.String("#missing <> :v"),
			ExpressionAttributeNames:  map[string]string{"#missing": "missing"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("v")}}},
		{name: "a number compared", in: dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"id": s("b"), "e": n("20")},
			ConditionExpression:       aws.String("#e <= :now OR #e > :later"),
			ExpressionAttributeNames:  map[string]string{"#e": "e"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":now": n("9"), ":later": n("9.5")}}},
		{name: "less than a missing attribute", in: dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"id": s("b")},
			ConditionExpression:       aws.String("#missing < :v"),
			ExpressionAttributeNames:  map[string]string{"#missing": "missing"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": n("1")}}},
	}
	for _, srv := range []struct{ name, env string }{{"moto", testenv.MotoEnv}, {"dynalite", testenv.DynaliteEnv}} {
		t.Run(srv.name, func(t *testing.T) {
			client := testenv.DynamoDB(t, srv.env)
			table := fmt.Sprintf("raw-%s-%d", srv.name, time.Now().UnixNano())
			createTable(t, client, table)
			model := &modelClient{db: newDatabase(table)}
			for _, p := range puts {
				in := p.in
				in.TableName = aws.String(table)
				_, mErr := model.PutItem(t.Context(), &in)
				_, rErr := client.PutItem(t.Context(), &in)
				switch {
				case p.differs == srv.name && code(mErr) == code(rErr):
					t.Errorf("%s: %s now answers as DynamoDB does (%s): drop the exception", p.name, srv.name, code(rErr))
				case p.differs != srv.name && code(mErr) != code(rErr):
					t.Errorf("%s: the model answers %s, %s %s (%v)", p.name, code(mErr), srv.name, code(rErr), rErr)
				}
			}
		})
	}
}

// TestDynamoModelClientRequestToken: a TransactWriteItems repeated with
// its ClientRequestToken, as the SDK repeats it, succeeds without being
// applied again, and another request with the token is refused
// (API_TransactWriteItems.html), on the model. Neither server implements
// the token: moto applies the repeat anew (its condition then fails) and
// takes another request with the token; dynalite has no transactions at
// all. The test says so, and fails when a server starts to agree, so
// that the exception is dropped. TransactionInProgressException, which
// needs a transaction still being applied when its repeat arrives, no
// local server can show: the model follows the page.
func TestDynamoModelClientRequestToken(t *testing.T) {
	t.Parallel()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	tx := func(table, id, token string) *dynamodb.TransactWriteItemsInput {
		return &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String(token), TransactItems: []types.TransactWriteItem{{Put: &types.Put{
			TableName:                aws.String(table),
			Item:                     map[string]types.AttributeValue{"id": s(id)},
			ConditionExpression:      aws.String("attribute_not_exists(#id)"),
			ExpressionAttributeNames: map[string]string{"#id": "id"},
		}}}}
	}
	steps := []struct {
		name, id, want string
		// differs is what moto answers instead, where it differs.
		differs string
	}{
		{"first", "x", "ok", ""},
		{"repeated with its token", "x", "ok", "TransactionCanceledException"},
		{"another request with the token", "y", "IdempotentParameterMismatchException", "ok"},
	}
	for _, srv := range []struct{ name, env string }{{"moto", testenv.MotoEnv}, {"dynalite", testenv.DynaliteEnv}} {
		t.Run(srv.name, func(t *testing.T) {
			client := testenv.DynamoDB(t, srv.env)
			table := fmt.Sprintf("token-%s-%d", srv.name, time.Now().UnixNano())
			createTable(t, client, table)
			model := &modelClient{db: newDatabase(table)}
			token := fmt.Sprintf("tok-%d", time.Now().UnixNano())
			for _, st := range steps {
				_, mErr := model.TransactWriteItems(t.Context(), tx(table, st.id, token))
				_, rErr := client.TransactWriteItems(t.Context(), tx(table, st.id, token))
				if code(mErr) != st.want {
					t.Errorf("%s: the model answers %s, want %s", st.name, code(mErr), st.want)
				}
				switch got := code(rErr); {
				case srv.name == "dynalite":
					if got != "UnknownOperationException" {
						t.Errorf("%s: dynalite answers %s: it has transactions now, compare it", st.name, got)
					}
				case st.differs != "" && got == st.want:
					t.Errorf("%s: moto now answers as DynamoDB does (%s): drop the exception", st.name, got)
				case st.differs != "" && got != st.differs:
					t.Errorf("%s: moto answers %s, not %s as it did", st.name, got, st.differs)
				case st.differs == "" && got != st.want:
					t.Errorf("%s: moto answers %s, the model %s", st.name, got, st.want)
				}
			}
		})
	}
}

// code is an answer's error code, or ok.
func code(err error) string {
	var api smithy.APIError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &api):
		return api.ErrorCode()
	}
	return err.Error()
}
