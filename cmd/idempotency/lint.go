package main

import (
	"context"
	"fmt"

	"github.com/gopowertools/lambda/cmd/idempotency/internal/lint"
	"github.com/gopowertools/lambda/cmd/idempotency/internal/template"
)

const lintAbout = `Checks the SAM template at TEMPLATE against the delivery rules that
idempotent functions depend on, and writes each breach on standard output,
one a line: the logical ID of the resource to change, the rule, what is
wrong, and the fix. The rules (docs/operations.md says why each matters):

  visibility-timeout   an SQS source queue's visibility timeout is under 6x
                       the function's timeout
  dead-letter-queue    an SQS source queue has no dead-letter queue
  max-receive-count    its maxReceiveCount is not 3
  batch-item-failures  an SQS, Kinesis or DynamoDB Streams source without
                       ReportBatchItemFailures
  dead-letter-alarm    a dead-letter queue (or on-failure queue) no alarm watches
  table-ttl            an idempotency table without TTL on "expiration"
  table-access         a function without exactly PutItem, GetItem,
                       DeleteItem and DescribeTable on its idempotency table
  record-expiry        records expire before the last retry can arrive
                       (queue or stream retention, maximum event age)
  key-path             an idempotent function without a key path
  settings             idempotency settings the function refuses at cold start
                       (the handler is built by the library's code, given the
                       function's environment as options), or a declaration
                       in Metadata.Idempotency that cannot be read

A function keeps idempotency records when it names a DynamoDB table in
POWERTOOLS_IDEMPOTENCY_TABLE, or a Redis or Valkey server in REDIS_URL.
Settings its code gives outright, which the template cannot see, are
declared in its Metadata:

  Metadata:
    Idempotency:
      WrapFunc: orders.fulfil   # the key comes from idempotency.WrapFunc's argument
      EventKey: order_id        # WithEventKey
      PayloadValidation: "[customer, amount, currency]"
      KeyPrefix: orders         # WithKeyPrefix
      KeyRequired: true         # WithKeyRequired
      ExpiresAfter: 96h         # WithExpiresAfter
      Compatibility: python     # WithCompatibility: own, python or typescript
      Hash: md5                 # WithHash: md5, sha1, sha224, sha256, sha384, sha512
      PythonHandler: app.lambda_handler  # WithPythonHandler
      AbandonPolicy: block      # WithAbandonPolicy: retry, block or uncertain

Exit status: 0 when the template is clean, 1 on any breach (an unknown
Metadata.Idempotency entry is a settings breach), 2 when the template
cannot be read.
`

func (c *cli) lint(_ context.Context, args []string) int {
	fs := c.flags("lint", "TEMPLATE", lintAbout)
	if status, ok := c.parse(fs, args, 1, 1); !ok {
		return status
	}
	t, err := template.Read(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(c.stderr, "idempotency lint: %s\n", escape(err.Error()))
		return exitUsage
	}
	findings := lint.Check(t)
	for _, f := range findings {
		fmt.Fprintln(c.stdout, escape(f.String()))
	}
	if len(findings) > 0 {
		fmt.Fprintf(c.stderr, "idempotency lint: %s of the delivery rules in %s\n", count(len(findings), "breach", "breaches"), escape(fs.Arg(0)))
		return exitFailed
	}
	return exitOK
}
