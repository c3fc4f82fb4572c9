package batch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gopowertools/lambda/powertools/batch"
)

var discard = slog.New(slog.DiscardHandler)

// lockedBuffer lets concurrent records log into one buffer.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// Every line, the processor's and the function's own, names its record.
func TestEveryLogLineNamesItsRecord(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	fn := func(ctx context.Context, msg events.SQSMessage) error {
		batch.Logger(ctx).Info("processing")
		if id, ok := batch.RecordID(ctx); !ok || id != msg.MessageId {
			t.Errorf("RecordID = %q, %v; want %q", id, ok, msg.MessageId)
		}
		switch msg.MessageId {
		case "m2":
			return errBoom
		case "m3":
			panic("poison")
		}
		return nil
	}
	p, _ := batch.New(batch.WithLogger(logger), batch.WithConcurrency(3))
	p.SQS(context.Background(), sqsEvent(fifoARN, "m1@A", "m2@B", "m3@C", "m4@A"), fn)
	p, _ = batch.New(batch.WithLogger(logger), batch.WithConcurrency(3))
	p.SQS(context.Background(), sqsEvent(standardARN, "m1", "m2", "m3", "m4"), fn)

	lines := strings.Split(strings.TrimSpace(buf.b.String()), "\n")
	var failed, skipped, panicked int
	for _, line := range lines {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if id, _ := entry["record_id"].(string); !strings.HasPrefix(id, "m") {
			t.Errorf("line without record_id: %s", line)
		}
		if _, ok := entry["record_index"]; !ok {
			t.Errorf("line without record_index: %s", line)
		}
		switch entry["msg"] {
		case "batch: record failed":
			failed++
			if _, ok := entry["stack"]; ok {
				panicked++
			}
		case "batch: record skipped":
			skipped++
		}
	}
	// FIFO: m2 fails, m3 and m4 skipped. Standard: m2 fails, m3 panics.
	if failed != 3 || skipped != 2 || panicked != 1 {
		t.Errorf("failed=%d skipped=%d panicked=%d lines, want 3, 2, 1:\n%s", failed, skipped, panicked, buf.b.String())
	}
	if got := batch.Logger(context.Background()); got != slog.Default() {
		t.Error("Logger outside a record is not slog.Default")
	}
}

// NewLogHandler names the record on lines logged by code that knows
// nothing of batches, once, and leaves other lines alone.
func TestLogHandler(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	logger := slog.New(batch.NewLogHandler(slog.NewJSONHandler(&buf, nil)))
	ctx := context.Background()
	logger.InfoContext(ctx, "outside")
	p, _ := batch.New(batch.WithLogger(logger), batch.WithConcurrency(2))
	p.SQS(ctx, sqsEvent(standardARN, "m1", "m2"), func(ctx context.Context, msg events.SQSMessage) error {
		logger.WarnContext(ctx, "from a library")
		logger.With("component", "x").InfoContext(ctx, "derived logger")
		batch.Logger(ctx).InfoContext(ctx, "batch.Logger")
		if msg.MessageId == "m2" {
			return errBoom // the processor's own line names the record itself
		}
		return nil
	})
	lines := strings.Split(strings.TrimSpace(buf.b.String()), "\n")
	if len(lines) != 1+2*3+1 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.b.String())
	}
	for _, line := range lines {
		n := strings.Count(line, `"record_id"`)
		switch {
		case strings.Contains(line, `"outside"`):
			if n != 0 {
				t.Errorf("a line outside any record names one: %s", line)
			}
		case n != 1 || !strings.Contains(line, `"record_index"`):
			t.Errorf("record_id %d times: %s", n, line)
		}
	}
}
