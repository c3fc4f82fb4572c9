// Package dynamo keeps idempotency records in a DynamoDB table: [Store]
// implements [idempotency.Store] with one conditional request per operation.
// Package redis beside it keeps them in Redis or Valkey. Both take their
// client and func(*Options), as the AWS SDK's clients do: the module's
// rule for a store built on a client (the middleware takes With…
// options).
//
// The table layout is the one Powertools for AWS Lambda uses (attribute
// names "id", "expiration", "in_progress_expiration", "status", "data",
// "validation"), plus "lease_token", "response_omitted", "completed_at"
// and "invocation_deadline", so a table made for Powertools in another
// language serves Go functions too. The item layout and the condition of
// every request are described in docs/record-format.md in the repository.
//
// The table is [Options.TableName], by default the value of the
// environment variable POWERTOOLS_IDEMPOTENCY_TABLE ([TableEnv]). That
// variable is this library's own, despite its prefix: Powertools for AWS
// Lambda (Python, TypeScript) reads no such variable, and takes the table
// name as an argument of its DynamoDB persistence layer.
//
// # Requests
//
//   - [Store.Acquire] is one PutItem, conditioned on no live record and
//     asking DynamoDB to return the existing item when the condition fails
//     (ReturnValuesOnConditionCheckFailure=ALL_OLD). A server that does not
//     return it costs a second, consistent GetItem.
//   - [Store.Complete] and [Store.MarkUncertain] are one PutItem,
//     conditioned on the lease token.
//   - [Store.Release] is one DeleteItem, conditioned on the lease token.
//   - [Store.Get] is one consistent GetItem.
//
// Once per Store, before its first Acquire writes anything, a
// DescribeTable reads whether the table is a global table: one in
// multi-Region eventual consistency is refused with an
// [*idempotency.ConfigError] unless [Options.AcceptEventualGlobalTable]
// accepts the risk, and on one in strong consistency [Stage] returns
// [ErrNoTransactions], since such a table runs no transactions
// (docs/multi-region.md).
//
// # Writes committed with the record
//
// Inside a handler made idempotent with a Store, [Stage] adds the handler's
// own DynamoDB writes (Put, Update, Delete, ConditionCheck, each with its
// own condition) to the invocation instead of sending them. When the
// handler succeeds, [Store.Complete] sends them in one TransactWriteItems
// together with the COMPLETED record, conditioned on the lease token: all
// of them or nothing is committed. A staged condition that fails makes the
// invocation fail with a [*StagedWriteError] and releases the key; a lost
// lease commits nothing. docs/exactly-once.md has the whole account.
//
// # Errors
//
// A failed condition gives [idempotency.ErrLeaseLost], a record over
// DynamoDB's 400 KB item limit gives [idempotency.ErrRecordTooLarge] (checked
// before the request is sent), an item that cannot be decoded gives a
// [*idempotency.CorruptedRecordError]. Every other failure is the SDK's error,
// wrapped with the operation and key: errors.As reaches it, as it reaches the
// SDK error behind ErrLeaseLost and ErrRecordTooLarge when the server sent
// one.
//
// A [Store] must be made with [New]; it is safe for concurrent use and
// starts no goroutine. [CreateTable] makes a table with the right key schema
// and TTL on the expiry attribute.
package dynamo
