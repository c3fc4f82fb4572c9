package dynamo

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// CreateTable makes the key schema of each mode, turns on TTL on the expiry
// attribute, and can run again on the same table. Moto only: dynalite has
// no UpdateTimeToLive.
func TestCreateTable(t *testing.T) {
	for _, mode := range keyModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			client := testenv.DynamoDB(t, testenv.MotoEnv)
			name := fmt.Sprintf("idem-create-%s-%d", mode.name, time.Now().UnixNano())
			opts := []func(*Options){mode.opt, func(o *Options) { o.TableName = name }}
			t.Cleanup(func() {
				_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
			})
			for range 2 {
				if err := CreateTable(t.Context(), client, opts...); err != nil {
					t.Fatal(err)
				}
			}
			desc, err := client.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
			if err != nil {
				t.Fatal(err)
			}
			var schema []string
			for _, k := range desc.Table.KeySchema {
				schema = append(schema, aws.ToString(k.AttributeName)+":"+string(k.KeyType))
			}
			want := "id:HASH"
			if mode.name == "composite" {
				want = "id:HASH sk:RANGE"
			}
			if got := strings.Join(schema, " "); got != want {
				t.Errorf("key schema = %s, want %s", got, want)
			}
			if desc.Table.TableStatus != types.TableStatusActive {
				t.Errorf("table status = %s, want ACTIVE", desc.Table.TableStatus)
			}
			if bm := desc.Table.BillingModeSummary; bm == nil || bm.BillingMode != types.BillingModePayPerRequest {
				t.Errorf("billing mode = %+v, want PAY_PER_REQUEST", bm)
			}
			ttl, err := client.DescribeTimeToLive(t.Context(), &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
			if err != nil {
				t.Fatal(err)
			}
			if d := ttl.TimeToLiveDescription; d == nil || d.TimeToLiveStatus != types.TimeToLiveStatusEnabled || aws.ToString(d.AttributeName) != "expiration" {
				t.Errorf("TTL = %+v, want ENABLED on expiration", d)
			}

			// TTL on another attribute would leave records forever.
			err = CreateTable(t.Context(), client, append(opts, func(o *Options) { o.ExpiryAttr = "expires_at" })...)
			if err == nil || !strings.Contains(err.Error(), `"expiration"`) {
				t.Errorf("CreateTable with another expiry attribute error = %v, want one naming the TTL attribute", err)
			}
		})
	}
}
