package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/examples/internal/emulator"
)

const first = `{"order_id":"order-1001","customer":"cus_42","amount":1999,"currency":"EUR"}`

// steps are the requests the demo sends, each with the status it expects.
var steps = []struct {
	title  string
	body   string
	status int
}{
	{"a first payment", first, 201},
	{"the same payment again, as a client retry", first, 201},
	{"the same order_id with another amount", `{"order_id":"order-1001","customer":"cus_42","amount":2999,"currency":"EUR"}`, 422},
	{"an invalid payment (empty order_id)", `{"order_id":"","customer":"cus_42","amount":1999,"currency":"EUR"}`, 400},
}

// sendPayments sends the steps and prints each response. It returns what
// went otherwise than expected.
func sendPayments(ctx context.Context, fn *emulator.Emulator) []string {
	var problems []string
	var firstBody string
	for i, step := range steps {
		fmt.Printf("%d. %s\n   POST /payments %s\n", i+1, step.title, step.body)
		resp, err := pay(ctx, fn, step.body)
		if err != nil {
			fmt.Printf("   -> %v\n\n", err)
			problems = append(problems, fmt.Sprintf("step %d: %v", i+1, err))
			continue
		}
		fmt.Printf("   -> %d %s\n", resp.StatusCode, resp.Body)
		if v := resp.Headers["Retry-After"]; v != "" {
			fmt.Printf("      Retry-After: %s\n", v)
		}
		switch i {
		case 0:
			firstBody = resp.Body
		case 1:
			fmt.Printf("      byte-identical to the first response: %t\n", resp.Body == firstBody)
			if resp.Body != firstBody {
				problems = append(problems, "the duplicate's response differs from the first")
			}
		}
		if resp.StatusCode != step.status {
			problems = append(problems, fmt.Sprintf("step %d: status %d, want %d", i+1, resp.StatusCode, step.status))
		}
		fmt.Println()
	}
	return problems
}

// pay sends body as an API Gateway HTTP API request to POST /payments.
func pay(ctx context.Context, fn *emulator.Emulator, body string) (events.APIGatewayV2HTTPResponse, error) {
	event, err := json.Marshal(events.APIGatewayV2HTTPRequest{
		Version:  "2.0",
		RouteKey: "POST /payments",
		RawPath:  "/payments",
		Headers:  map[string]string{"content-type": "application/json"},
		Body:     body,
	})
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	raw, err := fn.Invoke(ctx, event)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(raw.Body, &resp); err != nil || resp.StatusCode == 0 {
		return resp, fmt.Errorf("the function failed: %s", raw.Body)
	}
	return resp, nil
}

// printRecords prints every record in the table, as the store reads it.
func printRecords(ctx context.Context, client *dynamodb.Client, store *dynamo.Store, table string) error {
	out, err := client.Scan(ctx, &dynamodb.ScanInput{
		TableName:            aws.String(table),
		ConsistentRead:       aws.Bool(true),
		ProjectionExpression: aws.String("id"),
	})
	if err != nil {
		return fmt.Errorf("scan the table: %w", err)
	}
	var keys []string
	for _, item := range out.Items {
		if id, ok := item["id"].(*types.AttributeValueMemberS); ok {
			keys = append(keys, id.Value)
		}
	}
	slices.Sort(keys)
	fmt.Printf("idempotency records in %q: %d\n", table, len(keys))
	for _, key := range keys {
		rec, err := store.Get(ctx, key)
		if err != nil {
			return err
		}
		fmt.Printf("  %s\n    status %s, expires %s, payload hash %.12s…, response %d bytes\n",
			rec.Key, rec.Status, rec.Expiry.UTC().Format(time.RFC3339), rec.PayloadHash, len(rec.Response))
	}
	return nil
}
