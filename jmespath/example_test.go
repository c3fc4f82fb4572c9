package jmespath_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gopowertools/lambda/jmespath"
)

func Example() {
	var data any
	_ = json.Unmarshal([]byte(`{"orders": [{"id": "a", "total": 12}, {"id": "b", "total": 40}]}`), &data)

	expr, err := jmespath.Compile("orders[?total > `20`].id")
	if err != nil {
		panic(err)
	}
	ids, err := expr.Search(data)
	fmt.Println(ids, err)
	// Output: [b] <nil>
}

func ExampleWithFunctions() {
	upper := jmespath.Function{
		Name:   "upper",
		Params: []jmespath.Param{{Types: jmespath.TypeString}},
		Call: func(args []any) (any, error) {
			return strings.ToUpper(args[0].(string)), nil
		},
	}
	expr, err := jmespath.Compile("upper(name)", jmespath.WithFunctions(upper))
	if err != nil {
		panic(err)
	}
	v, err := expr.Search(map[string]any{"name": "gopher"})
	fmt.Println(v, err)

	// Types are checked before Call runs.
	_, err = expr.Search(map[string]any{"name": 42.0})
	var typeErr *jmespath.InvalidTypeError
	fmt.Println(errors.As(err, &typeErr), typeErr.Got)
	// Output:
	// GOPHER <nil>
	// true number
}

func ExampleExpression_SearchJSON() {
	event := []byte(`{"requestContext": {"requestId": "r-1"},
		"body": "{\"order_id\": 12345678901234567890, \"qty\": 2}"}`)

	id, _ := jmespath.MustCompile("powertools_json(body).order_id").SearchJSON(event)
	fmt.Printf("%T %v\n", id, id)

	req, _ := jmespath.MustCompile("requestContext.requestId").SearchJSON(event)
	fmt.Println(req)
	// Output:
	// json.Number 12345678901234567890
	// r-1
}

// SearchJSON refuses a document that a handler decoding it into a struct
// could read otherwise: encoding/json fills OrderID `json:"order_id"` from
// "ORDER_ID" too, so this event names two orders.
func ExampleExpression_SearchJSON_ambiguous() {
	event := []byte(`{"body": "{\"order_id\": \"A\", \"ORDER_ID\": \"B\"}"}`)
	_, err := jmespath.MustCompile("powertools_json(body).order_id").SearchJSON(event)
	var valueErr *jmespath.InvalidValueError
	fmt.Println(errors.As(err, &valueErr), valueErr.Msg)
	// Output:
	// true ambiguous JSON
}

func Example_powertoolsJSON() {
	data := map[string]any{"body": `{"customer": {"id": "c-42"}}`}
	v, err := jmespath.MustCompile("powertools_json(body).customer.id").Search(data)
	fmt.Println(v, err)

	_, err = jmespath.MustCompile("powertools_json(body)").Search(map[string]any{"body": "{oops"})
	var valueErr *jmespath.InvalidValueError
	fmt.Println(errors.As(err, &valueErr), valueErr.Function)
	// Output:
	// c-42 <nil>
	// true powertools_json
}

func ExampleSyntaxError() {
	_, err := jmespath.Compile("orders[?total > ]")
	var syntaxErr *jmespath.SyntaxError
	if errors.As(err, &syntaxErr) {
		fmt.Println(syntaxErr.Offset, syntaxErr.Msg)
	}
	// Output: 16 unexpected ']'
}
