// Log attributes carried in a context.Context and added to every record
// logged with that context, so that every line about one message (from the
// watcher, the processor, the agent, the dispatcher, the clients) names it:
// key, Message-ID, IMAP UID.

package trace

import (
	"context"
	"log/slog"
	"slices"
	"time"
)

type logAttrsKey struct{}

// WithLogAttrs returns ctx carrying args (slog key-value pairs or slog.Attr) in
// addition to those it already carries; a key given again replaces its
// earlier value.
func WithLogAttrs(ctx context.Context, args ...any) context.Context {
	r := slog.NewRecord(time.Time{}, 0, "", 0)
	r.Add(args...)
	var added []slog.Attr
	r.Attrs(func(a slog.Attr) bool {
		added = append(added, a)
		return true
	})
	var attrs []slog.Attr
	for _, a := range LogAttrs(ctx) { // a key set again takes its new value, once
		if !slices.ContainsFunc(added, func(b slog.Attr) bool { return b.Key == a.Key }) {
			attrs = append(attrs, a)
		}
	}
	return context.WithValue(ctx, logAttrsKey{}, append(attrs, added...))
}

// LogAttrs returns the log attributes ctx carries.
func LogAttrs(ctx context.Context) []slog.Attr {
	attrs, _ := ctx.Value(logAttrsKey{}).([]slog.Attr)
	return attrs
}

// LogHandler adds the context's attributes to every record before next sees
// it (an attribute the record has itself is not repeated). Records logged without a context (slog's Info, not InfoContext) pass
// unchanged.
func LogHandler(next slog.Handler) slog.Handler { return &logHandler{next: next} }

type logHandler struct{ next slog.Handler }

func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if attrs := LogAttrs(ctx); len(attrs) > 0 {
		have := map[string]bool{}
		r.Attrs(func(a slog.Attr) bool {
			have[a.Key] = true
			return true
		})
		r = r.Clone()
		for _, a := range attrs {
			if !have[a.Key] { // the record's own value wins
				r.AddAttrs(a)
			}
		}
	}
	return h.next.Handle(ctx, r)
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logHandler{next: h.next.WithAttrs(attrs)}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{next: h.next.WithGroup(name)}
}
