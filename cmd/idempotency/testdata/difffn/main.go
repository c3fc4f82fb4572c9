// Command difffn is a function for the command's differential test: an
// idempotent handler as a deployed function builds it, from its
// environment (the POWERTOOLS_IDEMPOTENCY_* variables,
// AWS_LAMBDA_FUNCTION_NAME) and what its code gives (DIFFFN_KEY_REQUIRED
// stands for WithKeyRequired(true)), over DynamoDB (DIFFFN_STORE=dynamodb,
// the table of POWERTOOLS_IDEMPOTENCY_TABLE, the SDK's configuration) or
// an in-memory store (DIFFFN_STORE=memory).
//
// It reads deliveries from standard input, one JSON object a line:
//
//	{"event": "...", "seed": {...record...}, "timeout_ms": 3000}
//
// invokes its handler with each event, under a context whose deadline is
// timeout_ms away, as Lambda's is, and writes what happened as one JSON
// object a line: whether the handler ran, the outcome its observer was
// told, the error's Go type and the lease end it gives, and the response.
// With the in-memory store, each delivery meets a store holding only its
// seed; on DynamoDB, the test writes the table.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// order is the handler's input: an amount that is not a number does not
// decode.
type order struct {
	OrderID string `json:"order_id"`
	Amount  int    `json:"amount"`
}

type receipt struct {
	OrderID string `json:"order_id"`
	Charged int    `json:"charged"`
}

type delivery struct {
	Event     string              `json:"event"`
	Seed      *idempotency.Record `json:"seed"`
	TimeoutMs int                 `json:"timeout_ms"`
}

// Answer is what one delivery did.
type Answer struct {
	Ran       bool   `json:"ran"`
	Outcome   string `json:"outcome"`
	ErrorType string `json:"error_type,omitempty"`
	Error     string `json:"error,omitempty"`
	LeaseEnd  string `json:"lease_end,omitempty"`
	Response  []byte `json:"response"`
}

// memory is the in-memory store of the current delivery.
type memory struct{ *idempotencytest.Store }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "difffn:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	var store idempotency.Store
	mem := &memory{}
	switch os.Getenv("DIFFFN_STORE") {
	case "memory":
		store = mem
	case "dynamodb":
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return err
		}
		if store, err = dynamo.New(dynamodb.NewFromConfig(cfg)); err != nil {
			return err
		}
	default:
		return errors.New("DIFFFN_STORE is neither memory nor dynamodb")
	}

	var ran bool
	var outcome idempotency.Outcome
	opts := []idempotency.Option{
		idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) { outcome = o.Outcome }),
	}
	if os.Getenv("DIFFFN_KEY_REQUIRED") == "true" {
		opts = append(opts, idempotency.WithKeyRequired(true))
	}
	h, err := idempotency.New(store, func(_ context.Context, o order) (receipt, error) {
		ran = true
		return receipt{OrderID: o.OrderID, Charged: o.Amount}, nil
	}, opts...)
	if err != nil {
		return err
	}

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var d delivery
		if err := json.Unmarshal(in.Bytes(), &d); err != nil {
			return err
		}
		mem.Store = idempotencytest.NewStore()
		if d.Seed != nil {
			mem.Put(d.Seed)
		}
		ran, outcome = false, ""
		ictx, cancel := context.WithTimeout(ctx, time.Duration(d.TimeoutMs)*time.Millisecond)
		resp, err := h.Invoke(ictx, []byte(d.Event))
		cancel()
		a := Answer{Ran: ran, Outcome: string(outcome), Response: resp}
		if err != nil {
			a.ErrorType, a.Error = fmt.Sprintf("%T", err), err.Error()
		}
		if e, ok := errors.AsType[*idempotency.InProgressError](err); ok {
			a.LeaseEnd = stamp(e.LeaseEnd)
		}
		if e, ok := errors.AsType[*idempotency.UncertainError](err); ok {
			a.LeaseEnd = stamp(e.LeaseEnd)
		}
		if err := out.Encode(a); err != nil {
			return err
		}
	}
	return in.Err()
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
