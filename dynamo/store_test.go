package dynamo

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// The conformance suite on both servers, in both key modes: on moto the
// existing record comes back with the failed put (ALL_OLD), on dynalite
// through the GetItem fallback.
func TestStoreConformance(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		for _, mode := range keyModes {
			t.Run(srv.name+"/"+mode.name, func(t *testing.T) {
				t.Parallel()
				client := srv.client(t)
				s := newStore(t, client, mode.opt)
				idempotencytest.TestStore(t, func(*testing.T) idempotency.Store { return s })
			})
		}
	}
}

// Each operation costs the requests the package documents.
func TestRequestCounts(t *testing.T) {
	t.Parallel()
	for _, srv := range servers {
		for _, mode := range keyModes {
			t.Run(srv.name+"/"+mode.name, func(t *testing.T) {
				t.Parallel()
				var reqs requests
				client := srv.client(t, reqs.option)
				s := newStore(t, client, mode.opt)
				ctx := t.Context()
				now := time.Now()
				reqs.take()

				rec := &idempotency.Record{Key: "count#1", Status: idempotency.StatusInProgress, LeaseToken: "a", Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute)}
				if existing, err := s.Acquire(ctx, rec, now); err != nil || existing != nil {
					t.Fatalf("Acquire new = %+v, %v", existing, err)
				}
				// The first Acquire of a Store reads the table's
				// description, once.
				reqs.want(t, "Acquire of a new key", map[string]int{"DescribeTable": 1, "PutItem": 1})

				dup := *rec
				dup.LeaseToken = "b"
				if existing, err := s.Acquire(ctx, &dup, now); err != nil || existing == nil || existing.LeaseToken != "a" {
					t.Fatalf("Acquire duplicate = %+v, %v; want the record of token a", existing, err)
				}
				if srv.allOld {
					reqs.want(t, "Acquire of a duplicate (ALL_OLD)", map[string]int{"PutItem": 1})
				} else {
					reqs.want(t, "Acquire of a duplicate (no ALL_OLD)", map[string]int{"PutItem": 1, "GetItem": 1})
				}

				done := *rec
				done.Status = idempotency.StatusComplete
				done.Response = []byte(`{"ok":true}`)
				if err := s.Complete(ctx, &done); err != nil {
					t.Fatal(err)
				}
				reqs.want(t, "Complete", map[string]int{"PutItem": 1})

				big := done
				big.Response = []byte(`"` + strings.Repeat("x", maxItemSize) + `"`)
				if err := s.Complete(ctx, &big); !errors.Is(err, idempotency.ErrRecordTooLarge) {
					t.Fatalf("Complete of a too large record error = %v, want ErrRecordTooLarge", err)
				}
				reqs.want(t, "Complete of a too large record", map[string]int{})

				if _, err := s.Get(ctx, rec.Key); err != nil {
					t.Fatal(err)
				}
				reqs.want(t, "Get", map[string]int{"GetItem": 1})

				if err := s.Release(ctx, rec.Key, "a"); err != nil {
					t.Fatal(err)
				}
				reqs.want(t, "Release", map[string]int{"DeleteItem": 1})
			})
		}
	}
}

// An item that the store cannot read makes Acquire and Get fail closed
// with a CorruptedRecordError, on items written by hand.
func TestCorruptedItem(t *testing.T) {
	t.Parallel()
	live := func() types.AttributeValue { return number(time.Now().Add(time.Hour).Unix()) }
	tests := []struct {
		name  string
		attrs map[string]types.AttributeValue
		// motoFails marks an item whose condition moto 5.2.5 cannot
		// evaluate: it answers HTTP 500 when the condition compares an S
		// attribute with an N value (DynamoDB and dynalite evaluate it to
		// false).
		motoFails bool
	}{
		{"UnknownStatus", map[string]types.AttributeValue{"status": &types.AttributeValueMemberS{Value: "BOGUS"}, "expiration": live()}, false},
		{"MissingStatus", map[string]types.AttributeValue{"expiration": live()}, false},
		{"StatusNotString", map[string]types.AttributeValue{"status": number(1), "expiration": live()}, false},
		{"DataNumber", map[string]types.AttributeValue{"status": &types.AttributeValueMemberS{Value: "COMPLETED"}, "expiration": live(), "data": number(42)}, false},
		{"ExpiryString", map[string]types.AttributeValue{"status": &types.AttributeValueMemberS{Value: "COMPLETED"}, "expiration": &types.AttributeValueMemberS{Value: "tomorrow"}}, true},
		{"LeaseEndFraction", map[string]types.AttributeValue{"status": &types.AttributeValueMemberS{Value: "COMPLETED"}, "expiration": live(), "in_progress_expiration": &types.AttributeValueMemberN{Value: "12.5"}}, false},
		{"OmittedString", map[string]types.AttributeValue{"status": &types.AttributeValueMemberS{Value: "COMPLETED"}, "expiration": live(), "response_omitted": &types.AttributeValueMemberS{Value: "yes"}}, false},
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			client := srv.client(t)
			s := newStore(t, client)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					if tt.motoFails && srv.name == "moto" {
						t.Skip("moto 5.2.5 answers HTTP 500 to a condition comparing S with N")
					}
					key := "corrupt#" + tt.name
					item := s.opts.key(key)
					for k, v := range tt.attrs {
						item[k] = v
					}
					if _, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(s.opts.TableName), Item: item}); err != nil {
						t.Fatal(err)
					}
					now := time.Now()
					existing, err := s.Acquire(t.Context(), &idempotency.Record{Key: key, Status: idempotency.StatusInProgress, LeaseToken: "a", Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute)}, now)
					var ce *idempotency.CorruptedRecordError
					if !errors.As(err, &ce) || ce.Key != key {
						t.Fatalf("Acquire = %+v, %v; want a *CorruptedRecordError for %q", existing, err, key)
					}
					t.Logf("reason: %s", ce.Reason)
					if _, err := s.Get(t.Context(), key); !errors.As(err, new(*idempotency.CorruptedRecordError)) {
						t.Fatalf("Get error = %v, want a CorruptedRecordError", err)
					}
				})
			}
		})
	}
}

// The servers' own answer to an item over 400 KB maps to ErrRecordTooLarge
// (the store's size check keeps its requests from ever getting it, so the
// request here is sent by hand).
func TestItemTooLargeFromServer(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			client := srv.client(t)
			s := newStore(t, client)
			item := s.opts.encode(&idempotency.Record{Key: "big", Status: idempotency.StatusComplete, Response: []byte(strings.Repeat("x", maxItemSize+1))})
			_, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(s.opts.TableName), Item: item})
			if err == nil {
				t.Fatal("the server accepted an item over 400 KB")
			}
			if err := requestError("complete", "big", err); !errors.Is(err, idempotency.ErrRecordTooLarge) || errors.Is(err, idempotency.ErrLeaseLost) {
				t.Fatalf("mapped error = %v, want ErrRecordTooLarge", err)
			}
		})
	}
}

// TestTokenlessRecord checks the conditions for an empty lease token on a
// record written without one, as Powertools writes its records: Release
// and Complete with no token act on it, and one with a token does not.
// (The condition once named a :token it did not send: every such request
// failed validation.)
func TestTokenlessRecord(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			client := srv.client(t)
			s := newStore(t, client)
			now := time.Now()
			put := func(key string) {
				t.Helper()
				item := s.opts.encode(&idempotency.Record{Key: key, Status: idempotency.StatusInProgress, Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute)})
				if _, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(s.opts.TableName), Item: item}); err != nil {
					t.Fatal(err)
				}
			}
			put("tokenless#release")
			if err := s.Release(t.Context(), "tokenless#release", "some-token"); !errors.Is(err, idempotency.ErrLeaseLost) {
				t.Fatalf("Release with a token: %v, want ErrLeaseLost", err)
			}
			if err := s.Release(t.Context(), "tokenless#release", ""); err != nil {
				t.Fatalf("Release without a token: %v", err)
			}
			if _, err := s.Get(t.Context(), "tokenless#release"); !errors.Is(err, idempotency.ErrRecordNotFound) {
				t.Fatalf("Get after the release: %v, want ErrRecordNotFound", err)
			}
			put("tokenless#complete")
			done := &idempotency.Record{Key: "tokenless#complete", Status: idempotency.StatusComplete, Expiry: now.Add(time.Hour), Response: []byte(`"ok"`)}
			if err := s.Complete(t.Context(), done); err != nil {
				t.Fatalf("Complete without a token: %v", err)
			}
		})
	}
}
