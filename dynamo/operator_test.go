package dynamo

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// pagedClient makes every Scan page at most limit items, so that a small
// table takes several pages.
type pagedClient struct {
	*dynamodb.Client
	limit int32
}

func (c pagedClient) Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	in.Limit = aws.Int32(c.limit)
	return c.Client.Scan(ctx, in, optFns...)
}

// operatorRecords are records in every state, as the middleware writes
// them, plus one as Powertools writes it (no token).
func operatorRecords(now time.Time) []*idempotency.Record {
	hour := now.Add(time.Hour).Truncate(time.Second)
	ms := func(t time.Time) time.Time { return t.Truncate(time.Millisecond) }
	return []*idempotency.Record{
		{Key: "op#live", Status: idempotency.StatusInProgress, Expiry: hour, LeaseEnd: ms(now.Add(time.Minute)), LeaseToken: "t-live"},
		{Key: "op#stuck", Status: idempotency.StatusInProgress, Expiry: hour, LeaseEnd: ms(now.Add(-time.Minute)), LeaseToken: "t-stuck"},
		{Key: "op#done", Status: idempotency.StatusComplete, Expiry: hour, LeaseToken: "t-done", Response: []byte(`{"ok":true}`), PayloadHash: "h", CompletedAt: ms(now)},
		{Key: "op#uncertain", Status: idempotency.StatusUncertain, Expiry: hour, LeaseToken: "t-uncertain"},
		{Key: "op#powertools", Status: idempotency.StatusComplete, Expiry: hour, Response: []byte(`"ok"`)},
	}
}

// putRaw writes rec as the store encodes it, without a condition.
func putRaw(t *testing.T, client *dynamodb.Client, s *Store, item map[string]types.AttributeValue) {
	t.Helper()
	if _, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(s.opts.TableName), Item: item}); err != nil {
		t.Fatal(err)
	}
}

func TestScanOnServers(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		for _, mode := range keyModes {
			t.Run(srv.name+"/"+mode.name, func(t *testing.T) {
				client := srv.client(t)
				plain := newStore(t, client, mode.opt)
				store, err := New(pagedClient{client, 2}, func(o *Options) { *o = plain.opts })
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]*idempotency.Record{}
				for _, rec := range operatorRecords(time.Now()) {
					putRaw(t, client, store, store.opts.encode(rec))
					want[rec.Key] = rec
				}
				bad := store.opts.encode(&idempotency.Record{Key: "op#bad", Status: "DONE"})
				putRaw(t, client, store, bad)
				if mode.name == "composite" {
					// Another function's record in the same table.
					other := store.opts
					other.StaticPartitionKey = "idempotency#other"
					putRaw(t, client, store, other.encode(&idempotency.Record{Key: "op#other", Status: idempotency.StatusComplete}))
				}

				got := map[string]*idempotency.Record{}
				var corrupted []error
				pages := 0
				for page, err := range store.Scan(t.Context(), "") {
					if err != nil {
						t.Fatal(err)
					}
					pages++
					for _, rec := range page.Records {
						got[rec.Key] = rec
					}
					corrupted = append(corrupted, page.Corrupted...)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Scan read (-want +got):\n%s", diff)
				}
				if pages < 3 {
					t.Errorf("Scan read %d pages of at most 2 items, want at least 3", pages)
				}
				var ce *idempotency.CorruptedRecordError
				if len(corrupted) != 1 || !errors.As(corrupted[0], &ce) || ce.Key != "op#bad" {
					t.Errorf("corrupted = %v, want one CorruptedRecordError for op#bad", corrupted)
				}

				var uncertain []string
				for page, err := range store.Scan(t.Context(), idempotency.StatusUncertain) {
					if err != nil {
						t.Fatal(err)
					}
					for _, rec := range page.Records {
						uncertain = append(uncertain, rec.Key)
					}
					if len(page.Corrupted) > 0 {
						t.Errorf("the UNCERTAIN scan read corrupted items: %v", page.Corrupted)
					}
				}
				if !slices.Equal(uncertain, []string{"op#uncertain"}) {
					t.Errorf("Scan(UNCERTAIN) = %v, want [op#uncertain]", uncertain)
				}
			})
		}
	}
}

func TestScanStopsWhenTheCallerDoes(t *testing.T) {
	t.Parallel()
	client := servers[0].client(t)
	plain := newStore(t, client)
	store, err := New(pagedClient{client, 1}, func(o *Options) { *o = plain.opts })
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range operatorRecords(time.Now()) {
		putRaw(t, client, store, store.opts.encode(rec))
	}
	pages := 0
	for _, err := range store.Scan(t.Context(), "") {
		if err != nil {
			t.Fatal(err)
		}
		pages++
		break
	}
	if pages != 1 {
		t.Errorf("ranged over %d pages after break, want 1", pages)
	}
}

// noScan is a Client without a Scan method.
type noScan struct{ Client }

func TestScanNeedsAScanClient(t *testing.T) {
	t.Parallel()
	store, err := New(noScan{}, func(o *Options) { o.TableName = "t" })
	if err != nil {
		t.Fatal(err)
	}
	for page, err := range store.Scan(context.Background(), "") {
		if err == nil || page != nil {
			t.Fatalf("Scan = %v, %v; want an error", page, err)
		}
	}
}

func TestDeleteOnServers(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		for _, mode := range keyModes {
			t.Run(srv.name+"/"+mode.name, func(t *testing.T) {
				client := srv.client(t)
				store := newStore(t, client, mode.opt)
				now := time.Now()
				records := map[string]*idempotency.Record{}
				for _, rec := range operatorRecords(now) {
					putRaw(t, client, store, store.opts.encode(rec))
					records[rec.Key] = rec
				}
				with := func(key string, change func(*idempotency.Record)) *idempotency.Record {
					rec := *records[key]
					change(&rec)
					return &rec
				}
				// What an operator saw that is no longer so: each is
				// refused, and the record stays as it is.
				for _, stale := range []*idempotency.Record{
					// The invocation completed meanwhile, under the same token.
					with("op#done", func(r *idempotency.Record) { r.Status = idempotency.StatusInProgress }),
					// Another invocation took the key over.
					with("op#stuck", func(r *idempotency.Record) { r.LeaseToken = "t-before" }),
					// A token where the record has none, and none where it has one.
					with("op#powertools", func(r *idempotency.Record) { r.LeaseToken = "t-any" }),
					with("op#uncertain", func(r *idempotency.Record) { r.LeaseToken = "" }),
					// Gone.
					{Key: "op#missing", Status: idempotency.StatusComplete, LeaseToken: "t"},
				} {
					if err := store.Delete(t.Context(), stale); !errors.Is(err, idempotency.ErrLeaseLost) {
						t.Errorf("Delete(%+v) = %v, want ErrLeaseLost", stale, err)
					}
				}
				for key := range records {
					if _, err := store.Get(t.Context(), key); err != nil {
						t.Errorf("after refused deletes, Get(%s) = %v", key, err)
					}
				}
				// The records as they are: deleted.
				for _, key := range slices.Sorted(maps.Keys(records)) {
					if err := store.Delete(t.Context(), records[key]); err != nil {
						t.Errorf("Delete(%s) = %v", key, err)
					}
					if _, err := store.Get(t.Context(), key); !errors.Is(err, idempotency.ErrRecordNotFound) {
						t.Errorf("after Delete, Get(%s) = %v, want ErrRecordNotFound", key, err)
					}
				}
			})
		}
	}
}
