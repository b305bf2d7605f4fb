package dispatcher

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/testkit/toolstest"
)

// captureHandler keeps every log record's level, message and attributes.
type captureHandler struct {
	mu      sync.Mutex
	level   slog.Level
	records []logLine
}

type logLine struct {
	Level slog.Level
	Msg   string
	Attrs map[string]any
}

func (h *captureHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *captureHandler) WithGroup(string) slog.Handler                { return h }
func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	l := logLine{Level: r.Level, Msg: r.Message, Attrs: map[string]any{}}
	r.Attrs(func(a slog.Attr) bool {
		l.Attrs[a.Key] = a.Value.Any()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, l)
	return nil
}

func TestCallLogging(t *testing.T) {
	args := map[string]any{"serial_number": "SN-00000"}
	tests := []struct {
		level slog.Level
		want  []logLine
	}{
		{slog.LevelInfo, []logLine{
			{slog.LevelInfo, "dispatcher: call", map[string]any{"name": FuncCheckWarranty, "ok": false, "blocked": true, "duration_ms": int64(5), "code": string(CodeSerialNotInMessage)}},
		}},
		{slog.LevelDebug, []logLine{
			{slog.LevelInfo, "dispatcher: call", map[string]any{"name": FuncCheckWarranty, "ok": false, "blocked": true, "duration_ms": int64(5), "code": string(CodeSerialNotInMessage)}},
			{slog.LevelDebug, "dispatcher: call args", map[string]any{"name": FuncCheckWarranty, "args": `{"serial_number":"SN-00000"}`}}, // JSON, not Go map syntax
		}},
	}
	for _, tt := range tests {
		t.Run(tt.level.String(), func(t *testing.T) {
			h := &captureHandler{level: tt.level}
			f := &fakeRoutes{}
			d, err := New(Config{Tools: toolstest.Shipped(t), Routes: f.routes(FuncCheckWarranty, FuncCreateTicket, FuncSendEmail, FuncNotifyStaff), Now: stepClock(), Logger: slog.New(h)})
			if err != nil {
				t.Fatal(err)
			}
			d.Session(testMessage(), testScenario(t, false), "k").Call(context.Background(), FuncCheckWarranty, args)
			if diff := cmp.Diff(tt.want, h.records); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}
