// Command payments is an AWS Lambda function behind an API Gateway HTTP API:
// POST /payments charges a card at most once per order_id, however often
// the client retries. A retry gets the first answer again, with the header
// Idempotency-Replayed: true; the other outcomes (a retry while the first
// request runs, an order_id reused with another amount, and so on) get the
// statuses of docs/http.md, each with an RFC 9457 problem as its body.
//
// Environment:
//
//	IDEMPOTENCY_STORE             where the idempotency records are kept: dynamodb (default),
//	                              redis (a Redis or Valkey server, or a replication group's
//	                              primary endpoint) or redis-cluster (ElastiCache Serverless,
//	                              cluster mode on, MemoryDB)
//	POWERTOOLS_IDEMPOTENCY_TABLE  the DynamoDB table of idempotency records (required for dynamodb)
//	REDIS_URL                     the server, redis://[user:password@]host:port or rediss:// for
//	                              TLS (required for redis and redis-cluster)
//	PAYMENT_PROVIDER_URL          the payment provider's base URL (required)
//	PAYMENT_PROVIDER_TIMEOUT      how long one charge request may take (Go duration, default 5s)
//
// and, to store the responses otherwise than as they are, with either
// store (docs/large-and-sensitive-responses.md; each is off when unset):
//
//	IDEMPOTENCY_RESPONSES_KEY       a KMS key (key ID, key ARN, alias name or alias ARN): every
//	                                response is encrypted under a data key of it, with the
//	                                encryption context {"idempotency-function": AWS_LAMBDA_FUNCTION_NAME}
//	IDEMPOTENCY_RESPONSES_BUCKET    an S3 bucket: responses over 350 KiB (after gzip and
//	                                encryption) are kept there, under idempotency/, and the record
//	                                points to them
//	IDEMPOTENCY_RESPONSES_GZIP_MIN  a size in bytes: responses at least this long are gzipped
//	                                (4096 is a good start)
//
// plus the AWS SDK's own variables (AWS_REGION, credentials,
// AWS_ENDPOINT_URL_DYNAMODB, _S3 and _KMS for local servers) and the
// idempotency middleware's POWERTOOLS_IDEMPOTENCY_* variables.
// docs/choosing-a-store.md compares the stores; docs/redis.md says what
// REDIS_URL may hold.
//
// A payment may list the order's lines ("items"), which must add up to its
// amount. The receipt lists them again, so an order of many lines makes a
// response too large for a DynamoDB item (400 KB): its retries get 409
// response-not-stored (docs/http.md), unless IDEMPOTENCY_RESPONSES_BUCKET
// is set.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	app, err := newAppFromEnv(context.Background(), log)
	if err != nil {
		// Failing here fails the cold start, which Lambda reports as an
		// init error: better than charging with a broken configuration.
		log.Error("payments: configuration", "err", err)
		os.Exit(1)
	}
	app.beforeCharge = injectedFault
	lambda.Start(app.Handle)
}
