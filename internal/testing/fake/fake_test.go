package fake

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestLog: what a logger writes through a Log comes back by level, with
// the record's attributes, those of With and those in groups, as slog's
// own text handler would name them.
func TestLog(t *testing.T) {
	t.Parallel()
	var log Log
	logger := slog.New(&log).With("fn", "orders")
	cause := errors.New("boom")
	logger.Error("could not", "key", "k1", "error", cause)
	logger.WithGroup("g").With("a", 1).Warn("slow", "b", 2*time.Second)
	logger.Info("fine")

	errs := log.At(slog.LevelError)
	if len(errs) != 1 || errs[0].Message != "could not" || errs[0].Attrs["fn"].String() != "orders" ||
		errs[0].Attrs["key"].String() != "k1" || errs[0].Attrs["error"].Any() != cause {
		t.Errorf("At(Error) = %+v", errs)
	}
	warns := log.At(slog.LevelWarn)
	if len(warns) != 1 || warns[0].Attrs["fn"].String() != "orders" || warns[0].Attrs["g.a"].Int64() != 1 ||
		warns[0].Attrs["g.b"].Duration() != 2*time.Second {
		t.Errorf("At(Warn) = %+v", warns)
	}
	if n := len(log.At(slog.LevelInfo)); n != 1 {
		t.Errorf("%d entries at Info, want 1", n)
	}
	var messages []string
	for _, e := range log.Entries() {
		messages = append(messages, e.Message)
	}
	if want := []string{"could not", "slow", "fine"}; !slices.Equal(messages, want) {
		t.Errorf("Entries are %q, want %q", messages, want)
	}
	log.Reset()
	if n := len(log.At(slog.LevelError)); n != 0 {
		t.Errorf("%d entries after Reset, want none", n)
	}
}

// TestLogConcurrent: loggers on one Log may log at once.
func TestLogConcurrent(t *testing.T) {
	t.Parallel()
	var log Log
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { slog.New(&log).With("i", i).Error("e") })
	}
	wg.Wait()
	if n := len(log.At(slog.LevelError)); n != 8 {
		t.Errorf("%d entries, want 8", n)
	}
}

// TestClock: the clock reads its start until moved, by each Advance.
func TestClock(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	c := NewClock(start)
	if !c.Now().Equal(start) {
		t.Fatalf("Now = %v, want %v", c.Now(), start)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { c.Advance(time.Second) })
	}
	wg.Wait()
	if got := c.Now(); !got.Equal(start.Add(4 * time.Second)) {
		t.Errorf("Now = %v after four seconds, want %v", got, start.Add(4*time.Second))
	}
}
