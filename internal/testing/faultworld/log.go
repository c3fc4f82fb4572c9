package faultworld

import (
	"context"
	"log/slog"
	"maps"
	"sync"
)

// ErrorLog is a slog handler that counts the middleware's ERROR records by
// message.
type ErrorLog struct {
	mu sync.Mutex
	n  map[string]int
}

func (l *ErrorLog) Enabled(context.Context, slog.Level) bool { return true }

func (l *ErrorLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = map[string]int{}
	}
	l.n[r.Message]++
	return nil
}

func (l *ErrorLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *ErrorLog) WithGroup(string) slog.Handler      { return l }

// Reset forgets the records counted.
func (l *ErrorLog) Reset() {
	l.mu.Lock()
	l.n = nil
	l.mu.Unlock()
}

// Total is the number of ERROR records counted.
func (l *ErrorLog) Total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, v := range l.n {
		n += v
	}
	return n
}

// Messages are the counts by message.
func (l *ErrorLog) Messages() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.n)
}
