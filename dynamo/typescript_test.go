package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

func TestCheckNumber(t *testing.T) {
	t.Parallel()
	ok := []string{"0", "-0", "0.000", "12.50", "1e125", "9.9999999999999999999999999999999999999e125", "1e-130", "-1E-130",
		"12345678901234567890123456789012345678", "1234567890123456789012345678901234567800000", "0.00012345678901234567890123456789012345678"}
	for _, n := range ok {
		if err := checkNumber(n); err != nil {
			t.Errorf("checkNumber(%s): %v", n, err)
		}
	}
	bad := []string{"1e126", "10e125", "1e-131", "0.1e-130", "123456789012345678901234567890123456789", "1.00000000000000000000000000000000000001", "1e99999999999"}
	for _, n := range bad {
		if err := checkNumber(n); err == nil {
			t.Errorf("checkNumber(%s) succeeded", n)
		}
	}
}

func TestJSONNumber(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"12": "12", "-1.5": "-1.5", "+3": "3", ".5": "0.5", "-.5": "-0.5", "5.": "5", "1E+2": "1e+2", "2.e3": "2e3"} {
		if got := jsonNumber(in); got != want {
			t.Errorf("jsonNumber(%s) = %s, want %s", in, got, want)
		}
	}
}

// A response goes into DynamoDB's types and comes back as the same JSON
// value, its members in key order.
func TestAttributeRoundTrip(t *testing.T) {
	t.Parallel()
	in := `{"z":[1,2.50,-0,1e3,"s",true,null,{}],"a":{"é":"<&>\u2028"},"e":[]}`
	var v any
	d := json.NewDecoder(strings.NewReader(in))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	av, err := attributeValue(v, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := attributeJSON(av)
	want := `{"a":{"é":"<&>\u2028"},"e":[],"z":[1,2.50,-0,1e3,"s",true,null,{}]}`
	if err != nil || string(got) != want {
		t.Errorf("round trip = %s, %v; want %s", got, err, want)
	}
	deep := strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1)
	if err := json.Unmarshal([]byte(deep), &v); err != nil {
		t.Fatal(err)
	}
	if _, err := attributeValue(v, 0); err == nil {
		t.Errorf("%d nested lists converted", maxNesting+1)
	}
	if _, err := attributeJSON(&types.AttributeValueMemberSS{Value: []string{"a"}}); err == nil {
		t.Error("a string set converted to JSON")
	}
}

// mapClient keeps items in a map by their id, with the one condition
// Acquire needs here: an existing item fails the put and comes back.
type mapClient struct {
	mu    sync.Mutex
	items map[string]map[string]types.AttributeValue
}

func (c *mapClient) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := in.Item["id"].(*types.AttributeValueMemberS).Value
	if old, ok := c.items[id]; ok && in.ReturnValuesOnConditionCheckFailure != "" {
		return nil, &types.ConditionalCheckFailedException{Item: old}
	}
	c.items[id] = in.Item
	return &dynamodb.PutItemOutput{}, nil
}

func (c *mapClient) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &dynamodb.GetItemOutput{Item: c.items[in.Key["id"].(*types.AttributeValueMemberS).Value]}, nil
}

func (c *mapClient) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.items, in.Key["id"].(*types.AttributeValueMemberS).Value)
	return &dynamodb.DeleteItemOutput{}, nil
}

// In PowertoolsTypeScript mode a handler's response is kept as DynamoDB's
// types and replayed from them; a string response of TypeScript's (S) is
// replayed as a JSON string; a response DynamoDB cannot hold that way is
// not stored. In the own format, such data is a corrupted record.
func TestTypeScriptData(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "fn")
	client := &mapClient{items: map[string]map[string]types.AttributeValue{}}
	store, err := New(client, func(o *Options) { o.TableName = "t" })
	if err != nil {
		t.Fatal(err)
	}
	var response json.RawMessage
	h := idempotency.Wrap(store, func(context.Context, json.RawMessage) (json.RawMessage, error) { return response, nil },
		idempotency.WithCompatibility(idempotency.PowertoolsTypeScript), idempotency.WithEventKey("id"))
	invoke := func(id string) ([]byte, error) {
		return h.Invoke(context.Background(), []byte(`{"id":"`+id+`"}`))
	}
	data := func(id string) types.AttributeValue {
		key, _, err := h.KeyOf([]byte(`{"id":"` + id + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		return client.items[key]["data"]
	}

	response = json.RawMessage(`{"b":[1,2.50],"a":"é"}`)
	if _, err := invoke("o-1"); err != nil {
		t.Fatal(err)
	}
	if m, ok := data("o-1").(*types.AttributeValueMemberM); !ok || attrString(m.Value["a"]) != "S:é" {
		t.Fatalf("data = %#v, want M", data("o-1"))
	}
	if got, err := invoke("o-1"); err != nil || string(got) != `{"a":"é","b":[1,2.50]}` {
		t.Errorf("replay = %s, %v", got, err)
	}

	// A record TypeScript wrote for a string response.
	key, _, _ := h.KeyOf([]byte(`{"id":"o-2"}`))
	client.items[key] = map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: key}, "status": &types.AttributeValueMemberS{Value: "COMPLETED"},
		"expiration": number(1 << 40), "data": &types.AttributeValueMemberS{Value: `say "hi"`},
	}
	if got, err := invoke("o-2"); err != nil || string(got) != `"say \"hi\""` {
		t.Errorf("replay of a string = %s, %v", got, err)
	}

	response = json.RawMessage(`{"n":1.000000000000000000000000000000000000001}`)
	if _, err := invoke("o-3"); err != nil {
		t.Fatal(err)
	}
	if _, err := invoke("o-3"); !errors.As(err, new(*idempotency.ResponseNotStoredError)) {
		t.Errorf("replay of a response DynamoDB cannot hold: %v, want *ResponseNotStoredError", err)
	}

	own := idempotency.Wrap(store, func(context.Context, json.RawMessage) (json.RawMessage, error) { return response, nil },
		idempotency.WithKeyPrefix("own"), idempotency.WithEventKey("id"))
	key, _, _ = own.KeyOf([]byte(`{"id":"o-4"}`))
	client.items[key] = map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: key}, "status": &types.AttributeValueMemberS{Value: "COMPLETED"},
		"expiration": number(1 << 40), "data": &types.AttributeValueMemberM{},
	}
	if _, err := own.Invoke(context.Background(), []byte(`{"id":"o-4"}`)); !errors.As(err, new(*idempotency.CorruptedRecordError)) {
		t.Errorf("own format on M data: %v, want *CorruptedRecordError", err)
	}
}
