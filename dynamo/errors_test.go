package dynamo

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// fakeClient answers each request with the next scripted response of its
// operation, and counts the requests.
type fakeClient struct {
	puts    []fakeResult
	gets    []fakeResult
	deletes []error
	calls   map[string]int
}

type fakeResult struct {
	item map[string]types.AttributeValue // GetItem's item
	err  error
}

func (f *fakeClient) count(op string) int {
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[op]++
	return f.calls[op] - 1
}

func (f *fakeClient) PutItem(_ context.Context, _ *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	i := f.count("PutItem")
	if i >= len(f.puts) {
		return nil, errors.New("fake: unexpected PutItem")
	}
	return &dynamodb.PutItemOutput{}, f.puts[i].err
}

func (f *fakeClient) GetItem(_ context.Context, _ *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	i := f.count("GetItem")
	if i >= len(f.gets) {
		return nil, errors.New("fake: unexpected GetItem")
	}
	return &dynamodb.GetItemOutput{Item: f.gets[i].item}, f.gets[i].err
}

func (f *fakeClient) DeleteItem(_ context.Context, _ *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	i := f.count("DeleteItem")
	if i >= len(f.deletes) {
		return nil, errors.New("fake: unexpected DeleteItem")
	}
	return &dynamodb.DeleteItemOutput{}, f.deletes[i]
}

func TestErrorMapping(t *testing.T) {
	t.Parallel()
	now := time.Now()
	rec := &idempotency.Record{Key: "k", Status: idempotency.StatusInProgress, LeaseToken: "a", Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute)}
	done := *rec
	done.Status = idempotency.StatusComplete
	done.Response = []byte(`1`)
	var s Store // options of the default layout, for items
	s.opts, _ = options([]func(*Options){func(o *Options) { o.TableName = "t" }})
	liveItem := s.opts.encode(&idempotency.Record{Key: "k", Status: idempotency.StatusInProgress, LeaseToken: "b", Expiry: now.Add(time.Hour), LeaseEnd: now.Add(time.Minute)})
	goneItem := s.opts.encode(&idempotency.Record{Key: "k", Status: idempotency.StatusInProgress, LeaseToken: "b", Expiry: now.Add(time.Hour), LeaseEnd: now.Add(-time.Second)})

	throttled := &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}
	ccf := &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	tooLarge := &smithy.GenericAPIError{Code: "ValidationException", Message: "Item size has exceeded the maximum allowed size"}
	otherValidation := &smithy.GenericAPIError{Code: "ValidationException", Message: "One or more parameter values were invalid"}

	tests := []struct {
		name      string
		client    fakeClient
		op        func(s *Store) error
		want      []error // each must match with errors.Is
		notWant   []error
		asTarget  any // when set, errors.As must find it
		wantCalls map[string]int
	}{
		{
			name:      "AcquireThrottled",
			client:    fakeClient{puts: []fakeResult{{err: throttled}}},
			op:        func(s *Store) error { _, err := s.Acquire(t.Context(), rec, now); return err },
			notWant:   []error{idempotency.ErrLeaseLost, idempotency.ErrRecordTooLarge},
			asTarget:  new(*types.ProvisionedThroughputExceededException),
			wantCalls: map[string]int{"PutItem": 1},
		},
		{
			name:      "CompleteConditionFailed",
			client:    fakeClient{puts: []fakeResult{{err: ccf}}},
			op:        func(s *Store) error { return s.Complete(t.Context(), &done) },
			want:      []error{idempotency.ErrLeaseLost},
			asTarget:  new(*types.ConditionalCheckFailedException),
			wantCalls: map[string]int{"PutItem": 1},
		},
		{
			name:      "CompleteItemTooLarge",
			client:    fakeClient{puts: []fakeResult{{err: tooLarge}}},
			op:        func(s *Store) error { return s.Complete(t.Context(), &done) },
			want:      []error{idempotency.ErrRecordTooLarge},
			notWant:   []error{idempotency.ErrLeaseLost},
			asTarget:  new(smithy.APIError),
			wantCalls: map[string]int{"PutItem": 1},
		},
		{
			name:      "CompleteOtherValidation",
			client:    fakeClient{puts: []fakeResult{{err: otherValidation}}},
			op:        func(s *Store) error { return s.Complete(t.Context(), &done) },
			notWant:   []error{idempotency.ErrRecordTooLarge, idempotency.ErrLeaseLost},
			asTarget:  new(smithy.APIError),
			wantCalls: map[string]int{"PutItem": 1},
		},
		{
			name:   "CompleteTooLargeBeforeSending",
			client: fakeClient{},
			op: func(s *Store) error {
				big := done
				big.Response = []byte(strings.Repeat("x", maxItemSize))
				return s.Complete(t.Context(), &big)
			},
			want:      []error{idempotency.ErrRecordTooLarge},
			wantCalls: map[string]int{},
		},
		{
			name:      "ReleaseConditionFailed",
			client:    fakeClient{deletes: []error{ccf}},
			op:        func(s *Store) error { return s.Release(t.Context(), "k", "a") },
			want:      []error{idempotency.ErrLeaseLost},
			asTarget:  new(*types.ConditionalCheckFailedException),
			wantCalls: map[string]int{"DeleteItem": 1},
		},
		{
			name:      "GetThrottled",
			client:    fakeClient{gets: []fakeResult{{err: throttled}}},
			op:        func(s *Store) error { _, err := s.Get(t.Context(), "k"); return err },
			notWant:   []error{idempotency.ErrRecordNotFound},
			asTarget:  new(*types.ProvisionedThroughputExceededException),
			wantCalls: map[string]int{"GetItem": 1},
		},
		{
			name:      "AcquireFallbackGetFails",
			client:    fakeClient{puts: []fakeResult{{err: ccf}}, gets: []fakeResult{{err: throttled}}},
			op:        func(s *Store) error { _, err := s.Acquire(t.Context(), rec, now); return err },
			notWant:   []error{idempotency.ErrLeaseLost},
			asTarget:  new(*types.ProvisionedThroughputExceededException),
			wantCalls: map[string]int{"PutItem": 1, "GetItem": 1},
		},
		{
			// The record blocking the put went before the GetItem: the put
			// is tried again, and succeeds.
			name:      "AcquireFallbackRecordGone",
			client:    fakeClient{puts: []fakeResult{{err: ccf}, {}}, gets: []fakeResult{{}}},
			op:        acquireWritten(t, rec, now),
			wantCalls: map[string]int{"PutItem": 2, "GetItem": 1},
		},
		{
			// The record read back has passed its lease: the put is tried
			// again.
			name:      "AcquireFallbackRecordNoLongerLive",
			client:    fakeClient{puts: []fakeResult{{err: ccf}, {}}, gets: []fakeResult{{item: goneItem}}},
			op:        acquireWritten(t, rec, now),
			wantCalls: map[string]int{"PutItem": 2, "GetItem": 1},
		},
		{
			name:   "AcquireFallbackLiveRecord",
			client: fakeClient{puts: []fakeResult{{err: ccf}}, gets: []fakeResult{{item: liveItem}}},
			op: func(s *Store) error {
				existing, err := s.Acquire(t.Context(), rec, now)
				if err == nil && (existing == nil || existing.LeaseToken != "b") {
					t.Errorf("Acquire = %+v, want the record of token b", existing)
				}
				return err
			},
			wantCalls: map[string]int{"PutItem": 1, "GetItem": 1},
		},
		{
			name:   "AcquireAllOld",
			client: fakeClient{puts: []fakeResult{{err: &types.ConditionalCheckFailedException{Item: liveItem}}}},
			op: func(s *Store) error {
				existing, err := s.Acquire(t.Context(), rec, now)
				if err == nil && (existing == nil || existing.LeaseToken != "b") {
					t.Errorf("Acquire = %+v, want the record of token b", existing)
				}
				return err
			},
			wantCalls: map[string]int{"PutItem": 1},
		},
		{
			// A record that keeps vanishing does not loop: two puts at most.
			name:      "AcquireFallbackBounded",
			client:    fakeClient{puts: []fakeResult{{err: ccf}, {err: ccf}}, gets: []fakeResult{{}, {}}},
			op:        func(s *Store) error { _, err := s.Acquire(t.Context(), rec, now); return err },
			notWant:   []error{idempotency.ErrLeaseLost},
			wantCalls: map[string]int{"PutItem": 2, "GetItem": 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(&tt.client, func(o *Options) { o.TableName = "t" })
			if err != nil {
				t.Fatal(err)
			}
			err = tt.op(s)
			wantErr := len(tt.want) > 0 || len(tt.notWant) > 0 || tt.asTarget != nil
			if wantErr && err == nil {
				t.Fatal("no error")
			}
			if !wantErr && err != nil {
				t.Fatalf("error: %v", err)
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("error %v does not match %v", err, w)
				}
			}
			for _, w := range tt.notWant {
				if errors.Is(err, w) {
					t.Errorf("error %v matches %v", err, w)
				}
			}
			if tt.asTarget != nil && !errors.As(err, tt.asTarget) {
				t.Errorf("error %v: the SDK error (%T) is not reachable with errors.As", err, tt.asTarget)
			}
			if tt.client.calls == nil {
				tt.client.calls = map[string]int{}
			}
			if !maps.Equal(tt.client.calls, tt.wantCalls) {
				t.Errorf("requests %v, want %v", tt.client.calls, tt.wantCalls)
			}
		})
	}
}

// acquireWritten returns an op that wants Acquire to write rec.
func acquireWritten(t *testing.T, rec *idempotency.Record, now time.Time) func(s *Store) error {
	return func(s *Store) error {
		existing, err := s.Acquire(t.Context(), rec, now)
		if existing != nil {
			t.Errorf("Acquire found %+v, want rec written", existing)
		}
		return err
	}
}
