package responsestore_test

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"fmt"
	"log"
	"strings"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

type statement struct {
	Account string   `json:"account"`
	Lines   []string `json:"lines"`
}

// A function whose responses are large and hold personal data: each is
// gzipped, encrypted with a KMS data key, and, when still over 350 KiB,
// kept in S3 with the record pointing to it. The bucket's lifecycle rule
// deletes the objects; docs/large-and-sensitive-responses.md has the
// template. (Compiled, not run: it needs AWS, DynamoDB, KMS and S3, and a
// Lambda environment.)
func ExampleNew() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	records, err := dynamo.New(dynamodb.NewFromConfig(cfg)) // POWERTOOLS_IDEMPOTENCY_TABLE
	if err != nil {
		log.Fatal(err)
	}
	store, err := responsestore.New(records,
		responsestore.WithCompression(4096),
		responsestore.WithKMS(kms.NewFromConfig(cfg), "alias/idempotency-responses"),
		responsestore.WithS3(s3.NewFromConfig(cfg), "my-idempotency-responses"),
	)
	if err != nil {
		log.Fatal(err) // a bad option; AWS_LAMBDA_FUNCTION_NAME unset outside Lambda
	}
	handler := idempotency.Wrap(store, func(ctx context.Context, in struct{ Account string }) (statement, error) {
		return statement{Account: in.Account}, nil
	}, idempotency.WithEventKey("Account"))
	_ = handler // lambda.Start(handler)
}

// With a key the function holds itself, any cipher.AEAD encrypts the
// responses. The inner store keeps an envelope; the middleware sees the
// response.
func ExampleWithAEAD() {
	key := make([]byte, 32) // in production, from AWS Secrets Manager
	block, _ := aes.NewCipher(key)
	aead, _ := cipher.NewGCM(block)

	inner := idempotencytest.NewStore()
	store, err := responsestore.New(inner, responsestore.WithAEAD(aead), responsestore.WithFunctionName("statements"))
	if err != nil {
		log.Fatal(err)
	}
	h := idempotency.Wrap(store, func(ctx context.Context, in struct{ Account string }) (statement, error) {
		return statement{Account: in.Account, Lines: []string{"salary 3,200.00"}}, nil
	}, idempotency.WithEventKey("Account"), idempotency.WithKeyPrefix("statements"))

	first, _ := h.Invoke(context.Background(), []byte(`{"Account":"ES91 2100"}`))
	again, _ := h.Invoke(context.Background(), []byte(`{"Account":"ES91 2100"}`))
	kept := inner.Records()[0].Response
	fmt.Println(string(first))
	fmt.Println(string(again))
	fmt.Println("kept in the clear:", strings.Contains(string(kept), "salary"))
	fmt.Printf("kept: %q...\n", kept[:6])
	// Output:
	// {"account":"ES91 2100","lines":["salary 3,200.00"]}
	// {"account":"ES91 2100","lines":["salary 3,200.00"]}
	// kept in the clear: false
	// kept: "\x89IDR\x01\x04"...
}
