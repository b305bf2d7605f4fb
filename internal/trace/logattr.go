// Package logattr carries log attributes in a context.Context and adds them
// to every record logged with that context, so that every line about one
// message (from the watcher, the processor, the agent, the dispatcher, the
// clients) names it: key, Message-ID, IMAP UID.
package logattr

import (
	"context"
	"log/slog"
	"slices"
	"time"
)

type ctxKey struct{}

// With returns ctx carrying args (slog key-value pairs or slog.Attr) in
// addition to those it already carries; a key given again replaces its
// earlier value.
func With(ctx context.Context, args ...any) context.Context {
	r := slog.NewRecord(time.Time{}, 0, "", 0)
	r.Add(args...)
	var added []slog.Attr
	r.Attrs(func(a slog.Attr) bool {
		added = append(added, a)
		return true
	})
	var attrs []slog.Attr
	for _, a := range From(ctx) { // a key set again takes its new value, once
		if !slices.ContainsFunc(added, func(b slog.Attr) bool { return b.Key == a.Key }) {
			attrs = append(attrs, a)
		}
	}
	return context.WithValue(ctx, ctxKey{}, append(attrs, added...))
}

// From returns the attributes ctx carries.
func From(ctx context.Context) []slog.Attr {
	attrs, _ := ctx.Value(ctxKey{}).([]slog.Attr)
	return attrs
}

// Handler adds the context's attributes to every record before next sees
// it (an attribute the record has itself is not repeated). Records logged without a context (slog's Info, not InfoContext) pass
// unchanged.
func Handler(next slog.Handler) slog.Handler { return &handler{next: next} }

type handler struct{ next slog.Handler }

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	if attrs := From(ctx); len(attrs) > 0 {
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

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &handler{next: h.next.WithAttrs(attrs)}
}

func (h *handler) WithGroup(name string) slog.Handler { return &handler{next: h.next.WithGroup(name)} }
