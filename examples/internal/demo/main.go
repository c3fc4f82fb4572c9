// Command demo runs the payments example locally, end to end: moto server
// as DynamoDB, a local payment provider that logs each charge, and the
// built payments function under the Lambda Runtime Interface Emulator. It
// creates the idempotency table, sends a payment, its duplicate, a
// conflicting one and an invalid one, and prints the responses, the stored
// records and the provider's charge count. It stops everything it started
// when it ends, also on Ctrl-C or SIGTERM, and exits non-zero if any
// outcome is not the expected one.
//
// scripts/demo.sh (`make demo`) installs the tools, builds the function and
// runs this program.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/examples/internal/emulator"
	"github.com/gopowertools/lambda/examples/internal/provider"
	"github.com/gopowertools/lambda/internal/testing/testenv"
)

// config is what the demo runs.
type config struct {
	moto, rie, bootstrap, logs string
}

func main() {
	var cfg config
	flag.StringVar(&cfg.moto, "moto", ".tools/venv/bin/moto_server", "moto_server binary")
	flag.StringVar(&cfg.rie, "rie", ".tools/bin/aws-lambda-rie", "aws-lambda-rie binary")
	flag.StringVar(&cfg.bootstrap, "bootstrap", "build/demo/bootstrap", "the payments function, built for this machine")
	flag.StringVar(&cfg.logs, "logs", "build/demo", "folder for the function's and moto's logs")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, cfg)
	switch {
	case ctx.Err() != nil:
		fmt.Println("\ninterrupted: stopped moto, the emulator and the provider")
		os.Exit(130)
	case err != nil:
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config) error {
	if err := os.MkdirAll(cfg.logs, 0o755); err != nil {
		return err
	}
	motoLog, err := os.Create(filepath.Join(cfg.logs, "moto.log"))
	if err != nil {
		return err
	}
	defer motoLog.Close()
	functionLog, err := os.Create(filepath.Join(cfg.logs, "function.log"))
	if err != nil {
		return err
	}
	defer functionLog.Close()

	db, err := startMoto(ctx, cfg.moto, motoLog)
	if err != nil {
		return err
	}
	defer db.stop()

	// The provider prints each charge as it makes it.
	prov := provider.New(slog.New(newLineHandler(os.Stdout, "   provider: ")))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: prov, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	defer srv.Close()
	providerURL := "http://" + l.Addr().String()

	const table = "payments-demo"
	client := testenv.NewDynamoDB(db.url)
	if err := dynamo.CreateTable(ctx, client, func(o *dynamo.Options) { o.TableName = table }); err != nil {
		return fmt.Errorf("create the table: %w", err)
	}
	store, err := dynamo.New(client, func(o *dynamo.Options) { o.TableName = table })
	if err != nil {
		return err
	}

	fn, err := emulator.Start(ctx, emulator.Config{
		RIE:       cfg.rie,
		Bootstrap: cfg.bootstrap,
		Env: []string{
			"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=demo", "AWS_SECRET_ACCESS_KEY=demo",
			"AWS_ENDPOINT_URL_DYNAMODB=" + db.url,
			"AWS_LAMBDA_FUNCTION_NAME=payments",
			"AWS_LAMBDA_FUNCTION_TIMEOUT=10",
			"POWERTOOLS_IDEMPOTENCY_TABLE=" + table,
			"PAYMENT_PROVIDER_URL=" + providerURL,
			// As template.yaml sets them.
			"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH=powertools_json(body).order_id",
			"POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH=powertools_json(body).[amount,currency]",
		},
		Output: functionLog,
	})
	if err != nil {
		return err
	}
	defer fn.Close()

	fmt.Printf("payments demo: moto at %s, provider at %s, function under the Lambda emulator\n", db.url, providerURL)
	fmt.Printf("table %q created (TTL on \"expiration\")\n\n", table)

	problems := sendPayments(ctx, fn)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := printRecords(ctx, client, store, table); err != nil {
		return err
	}
	requests, charges := prov.Requests(), len(prov.Charges())
	fmt.Printf("\nprovider: %d charge request(s), %d charge(s)\n", requests, charges)
	if requests != 1 || charges != 1 {
		problems = append(problems, fmt.Sprintf("the provider got %d requests and made %d charges, want 1 and 1", requests, charges))
	}
	fmt.Printf("logs: %s, %s\n", functionLog.Name(), motoLog.Name())
	if len(problems) > 0 {
		return errors.New(fmt.Sprint(problems))
	}
	fmt.Println("\nthe card was charged once.")
	return nil
}
