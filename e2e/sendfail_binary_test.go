package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/testkit/mailtest"
)

// TestBinarySendFailed: the real binary against an SMTP server that
// answers AUTH PLAIN with 504 (it offers nothing triage speaks). The refusal
// is visible wherever an operator looks: watch --once exits 1, an ERROR
// line carries the server's code and text, the ledger has the message
// failed/send_failed with that text, and the ticket opened for it says that
// the customer got no reply.
func TestBinarySendFailed(t *testing.T) {
	w := newWorld(t, "")
	refusing := mailtest.StartSMTPSink(t, mailtest.SMTPOptions{User: "relay", Password: "relaypw", Mechanisms: []string{"CRAM-MD5"}})
	cfg, err := os.ReadFile(w.config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.config, []byte(strings.Replace(string(cfg), w.sink.Addr, refusing.Addr, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	w.sink = refusing
	in := w.deliver(0) // valid warranty: a ticket, then the reply

	code, out := w.run("watch", "--config", w.config, "--once")
	if code != 1 {
		t.Errorf("watch --once exit %d, want 1\n%s", code, out)
	}
	var logged bool
	for _, line := range strings.Split(out, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["level"] == "ERROR" && rec["smtp_code"] == float64(504) && strings.Contains(str(rec["smtp_text"]), "Unsupported authentication mechanism") {
			logged = true
		}
	}
	if !logged {
		t.Errorf("no ERROR line with the server's 504 and its text:\n%s", out)
	}

	e := w.entry(in.ID)
	if e.State != ledger.StateFailed || e.Reason != "send_failed" || !strings.Contains(e.Detail, "504 5.7.4 Unsupported authentication mechanism") {
		t.Errorf("ledger entry %s/%s %q, want failed/send_failed with the server's reply", e.State, e.Reason, e.Detail)
	}
	code, listed := w.run("ledger", "--config", w.config, "--json")
	if code != 0 || !strings.Contains(listed, "Unsupported authentication mechanism") {
		t.Errorf("triage ledger --json: exit %d, the server's text missing:\n%s", code, listed)
	}

	s, err := tickets.OpenSQLite(filepath.Join(w.dir, "tickets.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	list, err := s.List(context.Background(), 0)
	if err != nil || len(list) != 1 {
		t.Fatalf("tickets: %v %+v, want one", err, list)
	}
	st := w.ticket(list[0].TicketID)
	var noted bool
	for _, n := range st.Notes {
		noted = noted || strings.Contains(n.Text, "could not send its reply") && strings.Contains(n.Text, "504")
	}
	if !noted {
		t.Errorf("ticket %s has no note that its reply failed: %+v", st.TicketID, st.Notes)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
