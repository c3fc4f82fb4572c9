package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file is the store's one look at its table's replication: a global
// table whose Regions are eventually consistent cannot keep the
// guarantee, and one whose Regions are strongly consistent cannot run
// transactions. docs/multi-region.md shows, with the simulator's
// schedules, what each mode does to an idempotent function.

// TableDescriber is the part of the DynamoDB API that tells the store
// whether its table is a global table, and in which consistency mode:
// *dynamodb.Client satisfies it. A [Client] that does not (a test double)
// is taken for a table of one Region.
type TableDescriber interface {
	DescribeTable(ctx context.Context, params *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

var _ TableDescriber = (*dynamodb.Client)(nil)

// errTransactionsMRSC is why staged writes are refused on a global table
// in multi-Region strong consistency.
var errTransactionsMRSC = fmt.Errorf("%w: the table is a global table with multi-Region strong consistency (MRSC), which does not support transactions", ErrNoTransactions)

// checkTable reads the table's description with DescribeTable, on the
// Store's first Acquire (in Lambda, the first invocation after a cold
// start) and on each one after until it passes, and refuses with an
// [*idempotency.ConfigError]:
//
//   - a global table with replicas in other Regions in multi-Region
//     eventual consistency (MREC; also the legacy 2017.11.29 version),
//     unless [Options.AcceptEventualGlobalTable];
//   - a function whose role may not call DescribeTable, naming the
//     permission: not knowing the table, the store does not guess.
//
// Another failure of DescribeTable (throttling, a network error) fails
// this Acquire, as any store error does.
func (s *Store) checkTable(ctx context.Context) error {
	d, ok := s.client.(TableDescriber)
	if !ok {
		return nil
	}
	out, err := d.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.opts.TableName)})
	if err != nil {
		var apiErr smithy.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "AccessDeniedException" {
			return fmt.Errorf("dynamo: describe table %q: %w", s.opts.TableName, err)
		}
		return &idempotency.ConfigError{Name: "dynamodb:DescribeTable", Err: fmt.Errorf(
			"the function may not describe its idempotency table %q, so the store cannot tell whether it is a global table that cannot keep the guarantee: grant dynamodb:DescribeTable on it: %w", s.opts.TableName, err)}
	}
	strong, err := judgeTable(out.Table, s.opts)
	s.strong.Store(strong)
	return err
}

// judgeTable decides on a table's description: an error for a table the
// store refuses, and whether it is strongly consistent across Regions.
func judgeTable(t *types.TableDescription, o Options) (strong bool, err error) {
	if t == nil {
		return false, nil
	}
	legacy := aws.ToString(t.GlobalTableVersion) == "2017.11.29"
	global := len(t.Replicas) > 1 || len(t.GlobalTableWitnesses) > 0 || legacy
	if !global {
		return false, nil
	}
	if t.MultiRegionConsistency == types.MultiRegionConsistencyStrong && !legacy {
		return true, nil
	}
	if o.AcceptEventualGlobalTable {
		return false, nil
	}
	return false, &idempotency.ConfigError{Name: "dynamo.Options.AcceptEventualGlobalTable", Err: fmt.Errorf(
		"table %q is a global table with replicas in %d Regions in multi-Region eventual consistency: each Region decides a conditional write on its own replica, so a duplicate delivered in another Region before the record has replicated (usually within a second) runs the handler again, and a stored response can be replaced; use a table of one Region, or a global table with MultiRegionConsistency STRONG, or set AcceptEventualGlobalTable to accept the risk (docs/multi-region.md)",
		o.TableName, max(len(t.Replicas), 2))}
}

// transactions reports why the store cannot commit staged writes with a
// transaction on its table, or nil.
func (s *Store) transactions() error {
	if _, ok := s.client.(TransactWriter); !ok {
		return ErrNoTransactions
	}
	if s.strong.Load() {
		return errTransactionsMRSC
	}
	return nil
}
