package watch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"triage/internal/clip"
	"triage/internal/testkit/mailtest"
)

// At DEBUG, watch logs each message's bytes as it starts on it: a message
// of megabytes is logged by its first 64 KiB, with its size.
func TestDebugLogCutsTheMessage(t *testing.T) {
	s := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	e := newEnv(t, s.Target())
	raw := fmt.Sprintf("From: Klient <jan@customer.example>\r\nTo: support@example.com\r\nSubject: Długi opis\r\n"+
		"Message-ID: <long@customer.example>\r\nDate: %s\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nMój numer seryjny SN-0001.\r\n%s\r\n",
		e.now.Format(time.RFC1123Z), strings.Repeat("Szczegóły usterki, ", 20000))
	e.tgt.Append(t, "INBOX", []byte(raw))
	var logs bytes.Buffer
	e.runOnce(func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	var found bool
	for line := range strings.Lines(logs.String()) {
		var rec struct {
			Msg   string `json:"msg"`
			Bytes int    `json:"bytes"`
			Raw   string `json:"raw"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Msg != "message body" {
			continue
		}
		found = true
		if rec.Bytes != len(raw) {
			t.Errorf("bytes = %d, want the message's %d", rec.Bytes, len(raw))
		}
		shown, cut := strings.CutSuffix(rec.Raw, clip.Ellipsis)
		if !cut || len(shown) > maxLoggedBody || len(shown) < maxLoggedBody-3 || !strings.HasPrefix(raw, shown) {
			t.Errorf("raw is %d bytes (cut: %v), want the message's first %d bytes and %q", len(shown), cut, maxLoggedBody, clip.Ellipsis)
		}
	}
	if !found {
		t.Fatalf("no \"message body\" line at DEBUG:\n%.2000s", logs.String())
	}
}
