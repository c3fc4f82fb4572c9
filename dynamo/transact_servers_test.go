package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Transactional completion on the real servers: a handler stages a ledger
// movement, and the movement and the COMPLETE record are committed
// together or not at all.

type movement struct {
	ID    string `json:"id"`
	Cents int    `json:"cents"`
}

// txWorld is a store and a ledger table on one server, and a handler that
// stages one movement per event.
type txWorld struct {
	t      *testing.T
	client *dynamodb.Client
	store  *Store
	ledger string
	reqs   *requests
	mu     sync.Mutex
	nRuns  map[string]int // handler runs by movement id; guarded by mu
	// during, when set, runs inside the handler after staging.
	during func(ctx context.Context)
}

func newTxWorld(t *testing.T, srv server, client *dynamodb.Client) *txWorld {
	t.Helper()
	w := &txWorld{t: t, reqs: &requests{}, nRuns: map[string]int{}}
	if client == nil {
		client = srv.client(t, w.reqs.option)
	}
	w.client = client
	w.store = newStore(t, srv.client(t))
	// The store under test sends through client (perhaps a proxy); the
	// table was made by a direct one.
	s, err := New(client, func(o *Options) { o.TableName = w.store.opts.TableName })
	if err != nil {
		t.Fatal(err)
	}
	w.store = s
	warm(t, s)
	w.reqs.take()
	w.ledger = fmt.Sprintf("ledger-%d", time.Now().UnixNano())
	ctx := t.Context()
	direct := srv.client(t)
	if _, err := direct.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(w.ledger),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("settlement_id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("settlement_id"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	}); err != nil {
		t.Fatal(err)
	}
	if err := dynamodb.NewTableExistsWaiter(direct).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(w.ledger)}, time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		direct.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(w.ledger)})
	})
	return w
}

func (w *txWorld) handler(ctx context.Context, m movement) (movement, error) {
	w.mu.Lock()
	w.nRuns[m.ID]++
	w.mu.Unlock()
	err := Stage(ctx, types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(w.ledger),
		Item: map[string]types.AttributeValue{
			"settlement_id": &types.AttributeValueMemberS{Value: m.ID},
			"cents":         &types.AttributeValueMemberN{Value: fmt.Sprint(m.Cents)},
		},
		ConditionExpression: aws.String("attribute_not_exists(settlement_id)"),
	}})
	if err != nil {
		return movement{}, err
	}
	if w.during != nil {
		w.during(ctx)
	}
	return m, nil
}

func (w *txWorld) wrap() *idempotency.Handler {
	return idempotency.Wrap(w.store, w.handler, idempotency.WithKeyPrefix("tx"), idempotency.WithEventKey("id"),
		idempotency.WithLease(10*time.Second))
}

func (w *txWorld) invoke(h *idempotency.Handler, id string) (string, error) {
	out, err := h.Invoke(context.Background(), []byte(fmt.Sprintf(`{"id":%q,"cents":100}`, id)))
	return string(out), err
}

// movements returns how many ledger items exist for id (0 or 1).
func (w *txWorld) movements(id string) int {
	w.t.Helper()
	out, err := w.client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(w.ledger), Key: ledgerKey(id), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		w.t.Fatal(err)
	}
	if out.Item == nil {
		return 0
	}
	return 1
}

// record returns the record of id, or nil.
func (w *txWorld) record(id string) *idempotency.Record {
	w.t.Helper()
	key, err := idempotencyKey("tx", id)
	if err != nil {
		w.t.Fatal(err)
	}
	rec, err := w.store.Get(context.Background(), key)
	if errors.Is(err, idempotency.ErrRecordNotFound) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return rec
}

// idempotencyKey is the key the middleware gives the string id.
func idempotencyKey(prefix, id string) (string, error) {
	var key string
	h := idempotency.Wrap(idempotencyKeyStore{&key}, func(context.Context, string) (string, error) { return "", nil },
		idempotency.WithKeyPrefix(prefix))
	if _, err := h.Invoke(context.Background(), []byte(fmt.Sprintf("%q", id))); !errors.Is(err, errKeyOnly) {
		return "", err
	}
	return key, nil
}

// idempotencyKeyStore records the key of an Acquire and refuses it.
type idempotencyKeyStore struct{ key *string }

var errKeyOnly = errors.New("key recorded")

func (s idempotencyKeyStore) Acquire(_ context.Context, rec *idempotency.Record, _ time.Time) (*idempotency.Record, error) {
	*s.key = rec.Key
	return nil, errKeyOnly
}
func (idempotencyKeyStore) Complete(context.Context, *idempotency.Record) error      { return nil }
func (idempotencyKeyStore) MarkUncertain(context.Context, *idempotency.Record) error { return nil }
func (idempotencyKeyStore) Release(context.Context, string, string) error            { return nil }
func (idempotencyKeyStore) Get(context.Context, string) (*idempotency.Record, error) { return nil, nil }
func (idempotencyKeyStore) Reclaim(context.Context, *idempotency.Record, string) error {
	return nil
}

func TestTransactionalCompletion(t *testing.T) {
	t.Parallel()
	moto := servers[0]

	t.Run("commits the movement with the record and replays it", func(t *testing.T) {
		w := newTxWorld(t, moto, nil)
		h := w.wrap()
		first, err := w.invoke(h, "s1")
		if err != nil {
			t.Fatal(err)
		}
		w.reqs.take()
		again, err := w.invoke(h, "s1")
		if err != nil || again != first || w.nRuns["s1"] != 1 {
			t.Fatalf("replay = %s, %v after %d runs; want %s from one run", again, err, w.nRuns["s1"], first)
		}
		w.reqs.want(t, "the replay", map[string]int{"PutItem": 1})
		if w.movements("s1") != 1 || w.record("s1").Status != idempotency.StatusComplete {
			t.Errorf("movements %d, record %+v; want one movement, COMPLETE", w.movements("s1"), w.record("s1"))
		}
	})

	t.Run("one TransactWriteItems and no PutItem to complete", func(t *testing.T) {
		w := newTxWorld(t, moto, nil)
		if _, err := w.invoke(w.wrap(), "s1"); err != nil {
			t.Fatal(err)
		}
		w.reqs.want(t, "a staged invocation", map[string]int{"PutItem": 1, "TransactWriteItems": 1})
	})

	t.Run("a staged condition fails so nothing is committed and the key is released", func(t *testing.T) {
		w := newTxWorld(t, moto, nil)
		if _, err := w.client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(w.ledger), Item: ledgerKey("s1")}); err != nil {
			t.Fatal(err)
		}
		_, err := w.invoke(w.wrap(), "s1")
		var swe *StagedWriteError
		if !errors.As(err, &swe) || swe.Index != 0 || swe.Code != "ConditionalCheckFailed" {
			t.Fatalf("Invoke: %v, want StagedWriteError at 0, ConditionalCheckFailed", err)
		}
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) {
			t.Errorf("Invoke: %v does not unwrap to the SDK's TransactionCanceledException", err)
		}
		if rec := w.record("s1"); rec != nil {
			t.Errorf("record %+v left behind, want it released", rec)
		}
	})

	t.Run("lease lost before the commit so nothing is committed", func(t *testing.T) {
		w := newTxWorld(t, moto, nil)
		w.during = func(ctx context.Context) {
			// Another invocation takes the key over meanwhile.
			key, _ := idempotency.KeyFromContext(ctx)
			rec, err := w.store.Get(ctx, key)
			if err != nil {
				t.Error(err)
				return
			}
			if err := w.store.Release(ctx, key, rec.LeaseToken); err != nil {
				t.Error(err)
			}
			rec.LeaseToken = "thief"
			if _, err := w.store.Acquire(ctx, rec, time.Now()); err != nil {
				t.Error(err)
			}
		}
		_, err := w.invoke(w.wrap(), "s1")
		commit, _ := errors.AsType[*idempotency.CommitError](err)
		if !errors.As(err, new(*idempotency.PersistenceError)) || commit == nil || commit.State != idempotency.CommitLeaseLost {
			t.Fatalf("Invoke: %v, want a PersistenceError: not committed, lease lost", err)
		}
		if w.movements("s1") != 0 || w.record("s1").LeaseToken != "thief" {
			t.Errorf("movements %d, record %+v; want none, and the thief's record untouched", w.movements("s1"), w.record("s1"))
		}
	})

	t.Run("the reply of the transaction lost after it was applied", func(t *testing.T) {
		p, err := faultproxy.NewHTTP(testenv.Endpoint(t, moto.env))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		w := newTxWorld(t, moto, testenv.NewDynamoDB(p.URL()))
		p.Set(faultproxy.Rule{Fault: faultproxy.ReplyLost, Op: "TransactWriteItems", Times: 1})
		h := w.wrap()
		first, err := w.invoke(h, "s1")
		if err != nil {
			t.Fatalf("Invoke after a lost reply: %v, want the SDK's retry to find the transaction applied", err)
		}
		if n := p.Counts().Forwarded["TransactWriteItems"]; n != 2 {
			t.Errorf("TransactWriteItems forwarded %d times, want 2 (the lost one and the retry)", n)
		}
		again, err := w.invoke(h, "s1")
		if err != nil || again != first || w.movements("s1") != 1 || w.nRuns["s1"] != 1 {
			t.Errorf("replay %s, %v; movements %d, runs %d; want the stored outcome, one movement, one run", again, err, w.movements("s1"), w.nRuns["s1"])
		}
	})

	t.Run("the same event after a lost acknowledgement", func(t *testing.T) {
		w := newTxWorld(t, moto, nil)
		first, err := w.invoke(w.wrap(), "s1")
		if err != nil {
			t.Fatal(err)
		}
		// The caller never got the answer and delivers again, to another
		// execution environment (a new handler, no shared memory).
		again, err := w.invoke(w.wrap(), "s1")
		if err != nil || again != first || w.movements("s1") != 1 || w.nRuns["s1"] != 1 {
			t.Errorf("redelivery %s, %v; movements %d, runs %d; want the stored outcome, one movement, one run", again, err, w.movements("s1"), w.nRuns["s1"])
		}
	})

	t.Run("two concurrent deliveries", func(t *testing.T) {
		w := newTxWorld(t, moto, nil)
		h := w.wrap()
		var wg sync.WaitGroup
		outs, errs := make([]string, 2), make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[i], errs[i] = w.invoke(h, "s1")
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil && !errors.As(err, new(*idempotency.InProgressError)) {
				t.Errorf("delivery %d: %v, want success or InProgressError", i, err)
			}
		}
		if errs[0] != nil && errs[1] != nil {
			t.Fatal("neither delivery succeeded")
		}
		replay, err := w.invoke(h, "s1")
		if err != nil || w.movements("s1") != 1 || w.nRuns["s1"] != 1 || (replay != outs[0] && replay != outs[1]) {
			t.Errorf("replay %s, %v; movements %d, runs %d; want one movement from one run", replay, err, w.movements("s1"), w.nRuns["s1"])
		}
	})

	t.Run("dynalite has no transactions so the invocation fails clearly", func(t *testing.T) {
		w := newTxWorld(t, servers[1], nil)
		_, err := w.invoke(w.wrap(), "s1")
		var te *TransactionError
		if !errors.As(err, &te) || te.Code != "UnknownOperationException" || !strings.Contains(err.Error(), "does not support transactions") {
			t.Fatalf("Invoke on dynalite: %v, want TransactionError UnknownOperationException", err)
		}
		if rec := w.record("s1"); rec != nil || w.movements("s1") != 0 {
			t.Errorf("record %+v, movements %d; want the key released and no movement", rec, w.movements("s1"))
		}
	})
}
