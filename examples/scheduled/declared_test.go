package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/gopowertools/lambda/examples/internal/template"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// TestTemplateDeclaresTheCode: template.yaml's Metadata.Idempotency
// declares the tick's function wrapper that NewApp builds (the records an
// operator inspects: one per tick), so that `idempotency inspect` and
// `lint` compute its keys and its records' expiry as it does.
func TestTemplateDeclaresTheCode(t *testing.T) {
	var events [][]byte
	at := time.Date(2026, 12, 1, 12, 5, 0, 0, time.UTC)
	for _, tick := range []Tick{{Job: "export", Time: at}, {Job: "export", Time: at.Add(5 * time.Minute)}, {Job: "import", Time: at}} {
		ev, err := json.Marshal(tick)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	template.CheckDeclared(t, template.Repository(), logicalID, events, func(s idempotency.Store) (template.Deliver, error) {
		app, err := NewApp(s, &JobClient{}, Config{Job: "export"}, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, ev []byte) error {
			var tick Tick
			if err := json.Unmarshal(ev, &tick); err != nil {
				return err
			}
			_, err := app.tick(ctx, tick)
			return err
		}, nil
	})
}
