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
		// Failing the cold start shows up as an init error on every tick:
		// better than running the job with a broken configuration.
		log.Error("scheduled: configuration", "err", err)
		os.Exit(1)
	}
	lambda.Start(app.Handle)
}
