package fake

import (
	"context"
	"log/slog"
	"slices"
	"sync"
)

// Log is a slog.Handler that keeps every record logged through it, with
// the attributes of the logger's With, for a test to read: that an error
// was logged, with its key, and once. Its zero value is ready to use. It
// is safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	entries []Entry
}

// Entry is one record that a [Log] kept.
type Entry struct {
	Level   slog.Level
	Message string
	// Attrs are the record's attributes by key, those of the logger's
	// With included; a group's are under "group.key".
	Attrs map[string]slog.Value
}

// Attr returns the text of the attribute named key, "" when the entry has
// none.
func (e Entry) Attr(key string) string {
	v, ok := e.Attrs[key]
	if !ok {
		return ""
	}
	return v.String()
}

// Entries returns the entries kept, in the order they were logged.
func (l *Log) Entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.entries)
}

// At returns the entries logged at level, in the order they were logged.
func (l *Log) At(level slog.Level) []Entry {
	var out []Entry
	for _, e := range l.Entries() {
		if e.Level == level {
			out = append(out, e)
		}
	}
	return out
}

// Reset forgets the entries kept so far.
func (l *Log) Reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}

func (l *Log) Enabled(context.Context, slog.Level) bool { return true }

func (l *Log) Handle(ctx context.Context, r slog.Record) error {
	return handler{log: l}.Handle(ctx, r)
}

func (l *Log) WithAttrs(attrs []slog.Attr) slog.Handler {
	return handler{log: l}.WithAttrs(attrs)
}

func (l *Log) WithGroup(name string) slog.Handler {
	return handler{log: l}.WithGroup(name)
}

// handler is a Log seen through a logger's With and WithGroup.
type handler struct {
	log   *Log
	attrs []slog.Attr // qualified by their groups
	group string      // "" or the open groups' names, each followed by "."
}

func (h handler) Enabled(context.Context, slog.Level) bool { return true }

func (h handler) Handle(_ context.Context, r slog.Record) error {
	e := Entry{Level: r.Level, Message: r.Message, Attrs: map[string]slog.Value{}}
	for _, a := range h.attrs {
		e.Attrs[a.Key] = a.Value
	}
	r.Attrs(func(a slog.Attr) bool {
		e.Attrs[h.group+a.Key] = a.Value.Resolve()
		return true
	})
	h.log.mu.Lock()
	h.log.entries = append(h.log.entries, e)
	h.log.mu.Unlock()
	return nil
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h.attrs = slices.Clone(h.attrs)
	for _, a := range attrs {
		h.attrs = append(h.attrs, slog.Attr{Key: h.group + a.Key, Value: a.Value.Resolve()})
	}
	return h
}

func (h handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h.group += name + "."
	return h
}
