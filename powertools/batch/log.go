package batch

import (
	"context"
	"log/slog"
)

// Logger returns the processor's logger with the record's record_id and
// record_index attributes, so that every line about a record names it.
// Outside a record function it returns [slog.Default].
func Logger(ctx context.Context) *slog.Logger {
	c, ok := ctx.Value(recordKey{}).(*current)
	if !ok {
		return slog.Default()
	}
	return c.logger.With(slog.String("record_id", c.id), slog.Int("record_index", c.index))
}

// NewLogHandler wraps h so that every line logged with the context of a
// record function carries the record's record_id and record_index, even
// from code that knows nothing of batches (the idempotency middleware
// logs with the context it is given). Lines that already name a record_id
// are left alone, and lines logged outside a record are passed on as they
// are. Pass the result to slog.New and use the logger with its Context
// methods (InfoContext, ...).
//
// Attributes added after WithGroup land in that group, as slog does.
func NewLogHandler(h slog.Handler) slog.Handler { return &logHandler{Handler: h} }

type logHandler struct {
	slog.Handler
	named bool // WithAttrs gave a record_id already (as [Logger] does)
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	c, ok := ctx.Value(recordKey{}).(*current)
	if ok && !h.named && !hasRecordID(r) {
		r = r.Clone() // a Record must not be changed in place: the caller may keep it
		r.AddAttrs(slog.String("record_id", c.id), slog.Int("record_index", c.index))
	}
	return h.Handler.Handle(ctx, r)
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	named := h.named
	for _, a := range attrs {
		named = named || a.Key == "record_id"
	}
	return &logHandler{Handler: h.Handler.WithAttrs(attrs), named: named}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{Handler: h.Handler.WithGroup(name), named: h.named}
}

func hasRecordID(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == "record_id"
		return !found
	})
	return found
}

func (p *Processor) logFailure(ctx context.Context, f *RecordError) {
	level, msg := slog.LevelError, "batch: record failed"
	attrs := []slog.Attr{slog.String("record_id", f.ID), slog.Int("record_index", f.Index), slog.Any("error", f.Err)}
	if skipped, ok := f.Err.(*SkippedError); ok {
		level, msg = slog.LevelWarn, "batch: record skipped"
		attrs[2] = slog.String("failed_record_id", skipped.FailedID)
	}
	if pe, ok := f.Err.(*PanicError); ok {
		attrs = append(attrs, slog.String("stack", string(pe.Stack)))
	}
	p.log().LogAttrs(ctx, level, msg, attrs...)
}
