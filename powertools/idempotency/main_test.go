package idempotency_test

import (
	"log/slog"
	"os"
	"testing"
)

// TestMain silences the default logger: tests that check logs pass their
// own with WithLogger, and the warnings of the others are noise.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}
