package dynamo

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// txClient is a Client with transactions whose TransactWriteItems fails
// with err and whose GetItem returns item.
type txClient struct {
	Client
	err    error
	item   map[string]types.AttributeValue
	getErr error // what GetItem returns
	sent   []*dynamodb.TransactWriteItemsInput
}

func (c *txClient) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.sent = append(c.sent, in)
	return &dynamodb.TransactWriteItemsOutput{}, c.err
}

func (c *txClient) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if c.getErr != nil {
		return nil, c.getErr
	}
	return &dynamodb.GetItemOutput{Item: c.item}, nil
}

// noTxClient is a Client without TransactWriteItems.
type noTxClient struct{ Client }

func ledgerPut(id string) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName:           aws.String("ledger"),
		Item:                map[string]types.AttributeValue{"settlement_id": &types.AttributeValueMemberS{Value: id}},
		ConditionExpression: aws.String("attribute_not_exists(settlement_id)"),
	}}
}

func ledgerKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"settlement_id": &types.AttributeValueMemberS{Value: id}}
}

func fakeStore(t *testing.T, client Client) *Store {
	t.Helper()
	s, err := New(client, func(o *Options) { o.TableName = "idem" })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStageOutsideInvocation(t *testing.T) {
	t.Parallel()
	if err := Stage(context.Background(), ledgerPut("s1")); !errors.Is(err, ErrNotInInvocation) {
		t.Errorf("Stage outside an invocation: %v, want ErrNotInInvocation", err)
	}
	ctx := fakeStore(t, noTxClient{}).StageWrites(context.Background())
	if err := Stage(ctx, ledgerPut("s1")); !errors.Is(err, ErrNoTransactions) {
		t.Errorf("Stage on a client without transactions: %v, want ErrNoTransactions", err)
	}
}

func TestStageChecks(t *testing.T) {
	t.Parallel()
	many := func(n int) []types.TransactWriteItem {
		w := make([]types.TransactWriteItem, n)
		for i := range w {
			w[i] = ledgerPut(strings.Repeat("x", i+1))
		}
		return w
	}
	big := ledgerPut("big")
	big.Put.Item["blob"] = &types.AttributeValueMemberB{Value: make([]byte, 390<<10)}
	bigs := make([]types.TransactWriteItem, 11)
	for i := range bigs {
		bigs[i] = big
	}
	tests := []struct {
		name      string
		writes    []types.TransactWriteItem
		wantLimit string // "" for an InvalidWriteError
		wantIndex int
	}{
		{"no operation", []types.TransactWriteItem{{}}, "", 0},
		{"two operations", []types.TransactWriteItem{{Put: ledgerPut("a").Put, Delete: &types.Delete{TableName: aws.String("ledger"), Key: ledgerKey("a")}}}, "", 0},
		{"no table", []types.TransactWriteItem{ledgerPut("a"), {Delete: &types.Delete{Key: ledgerKey("a")}}}, "", 1},
		{"no key", []types.TransactWriteItem{{Delete: &types.Delete{TableName: aws.String("ledger")}}}, "", 0},
		{"update without expression", []types.TransactWriteItem{{Update: &types.Update{TableName: aws.String("ledger"), Key: ledgerKey("a")}}}, "", 0},
		{"condition check without condition", []types.TransactWriteItem{{ConditionCheck: &types.ConditionCheck{TableName: aws.String("ledger"), Key: ledgerKey("a")}}}, "", 0},
		{"100 writes leave no place for the record", many(100), LimitItems, -1},
		{"over 4 MB", bigs, LimitSize, -1},
		{"same item twice", []types.TransactWriteItem{
			{Update: &types.Update{TableName: aws.String("ledger"), Key: ledgerKey("a"), UpdateExpression: aws.String("SET n = :n")}},
			{Delete: &types.Delete{TableName: aws.String("ledger"), Key: ledgerKey("b")}},
			{ConditionCheck: &types.ConditionCheck{TableName: aws.String("ledger"), Key: ledgerKey("a"), ConditionExpression: aws.String("attribute_exists(n)")}},
		}, LimitSameItem, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := fakeStore(t, &txClient{}).StageWrites(context.Background())
			err := Stage(ctx, tt.writes...)
			var invalid *InvalidWriteError
			var limit *TransactionLimitError
			switch {
			case tt.wantLimit == "" && (!errors.As(err, &invalid) || invalid.Index != tt.wantIndex):
				t.Errorf("Stage: %v, want InvalidWriteError at %d", err, tt.wantIndex)
			case tt.wantLimit != "" && (!errors.As(err, &limit) || limit.Limit != tt.wantLimit || limit.Index != tt.wantIndex):
				t.Errorf("Stage: %v, want TransactionLimitError %q at %d", err, tt.wantLimit, tt.wantIndex)
			}
		})
	}
	t.Run("99 writes fit, one more does not", func(t *testing.T) {
		ctx := fakeStore(t, &txClient{}).StageWrites(context.Background())
		if err := Stage(ctx, many(99)...); err != nil {
			t.Fatalf("Stage(99 writes): %v", err)
		}
		if err := Stage(ctx, ledgerPut("one more")); !errors.As(err, new(*TransactionLimitError)) {
			t.Errorf("Stage(100th): %v, want a TransactionLimitError", err)
		}
	})
	t.Run("a staged write to the record's own item", func(t *testing.T) {
		s := fakeStore(t, &txClient{})
		ctx := s.StageWrites(context.Background())
		own := types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String("idem"), Key: s.opts.key("k")}}
		if err := Stage(ctx, own); err != nil {
			t.Fatal(err)
		}
		err := s.Complete(ctx, &idempotency.Record{Key: "k", Status: idempotency.StatusComplete, LeaseToken: "t"})
		var limit *TransactionLimitError
		if !errors.As(err, &limit) || limit.Limit != LimitSameItem || limit.Index != 1 {
			t.Errorf("Complete: %v, want TransactionLimitError on the record (index 1)", err)
		}
	})
	t.Run("a response that makes the transaction too large", func(t *testing.T) {
		client := &txClient{}
		s := fakeStore(t, client)
		ctx := s.StageWrites(context.Background())
		if err := Stage(ctx, bigs[:10]...); err != nil {
			t.Fatal(err)
		}
		rec := &idempotency.Record{Key: "k", Status: idempotency.StatusComplete, LeaseToken: "t", Response: make([]byte, 300<<10)}
		err := s.Complete(ctx, rec)
		if !errors.Is(err, idempotency.ErrRecordTooLarge) || len(client.sent) != 0 {
			t.Fatalf("Complete: %v, sent %d; want ErrRecordTooLarge before sending, so that the middleware drops the response", err, len(client.sent))
		}
		rec.Response, rec.ResponseOmitted = nil, true
		if err := s.Complete(ctx, rec); err != nil || len(client.sent) != 1 {
			t.Errorf("Complete without the response: %v, sent %d; want one transaction", err, len(client.sent))
		}
	})
	t.Run("Stage after the commit", func(t *testing.T) {
		s := fakeStore(t, &txClient{})
		ctx := s.StageWrites(context.Background())
		Stage(ctx, ledgerPut("a"))
		if err := s.Complete(ctx, &idempotency.Record{Key: "k", Status: idempotency.StatusComplete, LeaseToken: "t"}); err != nil {
			t.Fatal(err)
		}
		if err := Stage(ctx, ledgerPut("b")); !errors.Is(err, ErrNotInInvocation) {
			t.Errorf("Stage after Complete: %v, want ErrNotInInvocation", err)
		}
	})
}

// httpError is err as the SDK returns a reply with status code.
func httpError(status int, err error) error {
	return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "TransactWriteItems", Err: &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}}, Err: err},
	}}
}

func canceled(codes ...string) error {
	tce := &types.TransactionCanceledException{Message: aws.String("Transaction cancelled")}
	for _, c := range codes {
		tce.CancellationReasons = append(tce.CancellationReasons, types.CancellationReason{Code: aws.String(c), Message: aws.String(c + " message")})
	}
	return httpError(400, tce)
}

func TestCommitErrors(t *testing.T) {
	t.Parallel()
	s := fakeStore(t, &txClient{})
	mine := s.opts.encode(&idempotency.Record{Key: "k", Status: idempotency.StatusComplete, LeaseToken: "t"})
	theirs := s.opts.encode(&idempotency.Record{Key: "k", Status: idempotency.StatusInProgress, LeaseToken: "other"})
	ours := s.opts.encode(&idempotency.Record{Key: "k", Status: idempotency.StatusInProgress, LeaseToken: "t"})
	withItem := func(err error, item map[string]types.AttributeValue) error {
		var tce *types.TransactionCanceledException
		errors.As(err, &tce)
		tce.CancellationReasons[len(tce.CancellationReasons)-1].Item = item
		return err
	}
	tests := []struct {
		name     string
		err      error
		item     map[string]types.AttributeValue // what GetItem finds
		want     idempotency.CommitState         // 0: success
		wantType any                             // what the CommitError wraps
	}{
		{"applied", nil, nil, 0, nil},
		{"record condition, record returned COMPLETE by us: a retry of an applied transaction", withItem(canceled("ConditionalCheckFailed", "ConditionalCheckFailed"), mine), nil, 0, nil},
		{"record condition, read back COMPLETE by us", canceled("ConditionalCheckFailed", "ConditionalCheckFailed"), mine, 0, nil},
		{"record condition, another token: lease lost", canceled("None", "ConditionalCheckFailed"), theirs, idempotency.CommitLeaseLost, nil},
		{"record condition, record gone: lease lost", canceled("None", "ConditionalCheckFailed"), nil, idempotency.CommitLeaseLost, nil},
		{"staged write condition", canceled("ConditionalCheckFailed", "None"), ours, idempotency.CommitRefused, &StagedWriteError{}},
		{"transaction conflict on the record", canceled("None", "TransactionConflict"), ours, idempotency.CommitRefused, &TransactionError{}},
		{"reasons that do not match the writes", canceled("ConditionalCheckFailed"), ours, idempotency.CommitRefused, &TransactionError{}},
		{"validation error", httpError(400, &smithy.GenericAPIError{Code: "ValidationException", Message: "Transaction request cannot include multiple operations on one item"}), ours, idempotency.CommitRefused, &TransactionError{}},
		{"server without transactions", httpError(400, &smithy.GenericAPIError{Code: "UnknownOperationException"}), ours, idempotency.CommitRefused, &TransactionError{}},
		{"throttled", httpError(400, &smithy.GenericAPIError{Code: "ThrottlingException"}), ours, idempotency.CommitRefused, &TransactionError{}},
		// The SDK's last attempt throttled, an earlier one applied with its
		// reply lost (the simulator's seed 1260): not refused.
		{"throttled after an attempt that was applied", httpError(400, &smithy.GenericAPIError{Code: "ThrottlingException"}), mine, 0, nil},
		{"in progress: may apply", httpError(400, &smithy.GenericAPIError{Code: "TransactionInProgressException"}), ours, idempotency.CommitUnknown, nil},
		{"server fault, applied", httpError(500, &smithy.GenericAPIError{Code: "InternalServerError"}), mine, 0, nil},
		{"server fault, not applied yet", httpError(500, &smithy.GenericAPIError{Code: "InternalServerError"}), ours, idempotency.CommitUnknown, nil},
		{"no reply, applied", errors.New("connection reset"), mine, 0, nil},
		{"no reply, not applied", errors.New("connection reset"), ours, idempotency.CommitUnknown, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := &txClient{err: tt.err, item: tt.item}
			s := fakeStore(t, client)
			ctx := s.StageWrites(context.Background())
			if err := Stage(ctx, ledgerPut("s1")); err != nil {
				t.Fatal(err)
			}
			err := s.Complete(ctx, &idempotency.Record{Key: "k", Status: idempotency.StatusComplete, LeaseToken: "t"})
			commit, _ := errors.AsType[*idempotency.CommitError](err)
			switch {
			case tt.want == 0 && err != nil:
				t.Fatalf("Complete: %v, want success", err)
			case tt.want != 0 && (commit == nil || commit.State != tt.want):
				t.Errorf("Complete: %v, want a CommitError %v", err, tt.want)
			}
			switch want := tt.wantType.(type) {
			case *StagedWriteError:
				if !errors.As(err, &want) || want.Index != 0 || want.Code != "ConditionalCheckFailed" {
					t.Errorf("Complete: %v, want StagedWriteError at 0", err)
				}
			case *TransactionError:
				if !errors.As(err, &want) || want.Code == "" {
					t.Errorf("Complete: %v, want TransactionError with a code", err)
				}
			}
			if len(client.sent) != 1 || len(client.sent[0].TransactItems) != 2 || client.sent[0].TransactItems[1].Put == nil {
				t.Fatalf("sent %+v, want one transaction: the staged put, then the record", client.sent)
			}
			cond := aws.ToString(client.sent[0].TransactItems[1].Put.ConditionExpression)
			if !strings.Contains(cond, "#token = :token") || !strings.Contains(cond, "#status <> :complete") {
				t.Errorf("record condition %q, want the token and not COMPLETE", cond)
			}
		})
	}
}

// TestCommitRefusedRecordUnreadable: a refusal of the SDK's last attempt
// says nothing of an earlier one, so when the record cannot be read back
// either, the outcome is unknown and the key is kept, not released.
func TestCommitRefusedRecordUnreadable(t *testing.T) {
	t.Parallel()
	client := &txClient{err: httpError(400, &smithy.GenericAPIError{Code: "ThrottlingException"}), getErr: errors.New("connection reset")}
	s := fakeStore(t, client)
	ctx := s.StageWrites(context.Background())
	if err := Stage(ctx, ledgerPut("s1")); err != nil {
		t.Fatal(err)
	}
	err := s.Complete(ctx, &idempotency.Record{Key: "k", Status: idempotency.StatusComplete, LeaseToken: "t"})
	if commit, ok := errors.AsType[*idempotency.CommitError](err); !ok || commit.State != idempotency.CommitUnknown {
		t.Errorf("Complete: %v, want a CommitError %v", err, idempotency.CommitUnknown)
	}
}
