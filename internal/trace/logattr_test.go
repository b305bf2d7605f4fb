package trace

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestHandlerAddsContextAttrs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})))
	ctx := WithLogAttrs(context.Background(), "key", "k1", "message_id", "<m@x>")
	ctx = WithLogAttrs(ctx, slog.Int("uid", 7), "key", "k1") // set again: once
	log.InfoContext(ctx, "agent turn", "turn", 1)
	log.InfoContext(ctx, "message", "message_id", "<m@x>") // not repeated
	log.Info("no context")
	want := `level=INFO msg="agent turn" turn=1 message_id=<m@x> uid=7 key=k1
level=INFO msg=message message_id=<m@x> uid=7 key=k1
level=INFO msg="no context"
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if strings.Count(buf.String(), "message_id") != 2 || strings.Count(buf.String(), "key=") != 2 {
		t.Errorf("an attribute repeated")
	}
}
