// Command echo is a Lambda function for the emulator's own tests: it
// returns its event's "say" field, logs its deadline, sleeps for "sleep"
// and panics when "panic" is true.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
)

type event struct {
	Say   string `json:"say"`
	Sleep string `json:"sleep"`
	Panic bool   `json:"panic"`
}

func main() {
	lambda.Start(func(ctx context.Context, e event) (string, error) {
		deadline, _ := ctx.Deadline()
		fmt.Printf("deadline_ms=%d\n", deadline.UnixMilli())
		if e.Sleep != "" {
			d, err := time.ParseDuration(e.Sleep)
			if err != nil {
				return "", err
			}
			time.Sleep(d)
		}
		if e.Panic {
			panic("echo: asked to panic")
		}
		return e.Say, nil
	})
}
