package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// lineHandler is a slog.Handler that prints each record on one indented
// line, "provider: charge id=ch_0001 ...", to fit between the demo's own
// lines.
type lineHandler struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
}

func newLineHandler(w io.Writer, prefix string) *lineHandler {
	return &lineHandler{mu: &sync.Mutex{}, w: w, prefix: prefix}
}

func (h *lineHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(h.prefix)
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

// The provider's logger has no attributes or groups of its own.
func (h *lineHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *lineHandler) WithGroup(string) slog.Handler      { return h }
