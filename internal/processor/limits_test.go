package processor_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"triage"
	"triage/internal/agent"
	"triage/internal/message"
	"triage/internal/processor"
)

// TestReplyToIsWhereTheMailWent: reply.to in the outcome is the address the
// receipt says the mail went to, not the model's argument.
func TestReplyToIsWhereTheMailWent(t *testing.T) {
	e := newEnv(t, &scripted{to: `"Dział Prawny" <ANNA@Example.PL>`})
	out := e.proc.Process(context.Background(), processor.Input{Name: "in.eml",
		Raw: eml("Anna <anna@example.pl>", "Reklamacja", "Mój ekspres SN-48213-PL nie działa, proszę o naprawę.")})
	if out.Status != triage.StatusReplied {
		t.Fatalf("status %s/%s: %s", out.Status, out.Reason, out.Detail)
	}
	raw, err := os.ReadFile(out.Reply.Path)
	if err != nil {
		t.Fatal(err)
	}
	if out.Reply.To != "anna@example.pl" || !strings.Contains(string(raw), "anna@example.pl") {
		t.Errorf("reply.to = %q, want the address the mail went to (anna@example.pl); sent:\n%s", out.Reply.To, raw)
	}
}

// TestHeaderTooLargeIsParseError: a header block over the cap is
// failed/parse_error with a detail naming the cap, before any model call.
func TestHeaderTooLargeIsParseError(t *testing.T) {
	m := &scripted{}
	e := newEnv(t, m)
	raw := eml("anna@example.pl", "Reklamacja", "SN-48213-PL nie działa", strings.Repeat("X-A: b\r\n", 40000))
	out := e.proc.Process(context.Background(), processor.Input{Name: "big.eml", Raw: raw})
	if out.Status != triage.StatusFailed || out.Reason != triage.ReasonParseError || !strings.Contains(out.Detail, "header block exceeds 262144 bytes") {
		t.Errorf("outcome %s/%s %q, want failed/parse_error naming the header cap", out.Status, out.Reason, out.Detail)
	}
	if n := m.calls.Load(); n != 0 {
		t.Errorf("%d model calls for an unparsed message", n)
	}
}

// TestBadThreadIDsStillReply: an inbound Message-ID with a space and a
// References of 100k IDs do not make send_email fail; the reply carries
// the trimmed thread.
func TestBadThreadIDsStillReply(t *testing.T) {
	var refs strings.Builder
	refs.WriteString("References:")
	for i := range 2000 {
		fmt.Fprintf(&refs, " <r%d@example.pl>\r\n", i)
	}
	raw := []byte("From: anna@example.pl\r\nTo: serwis@example.com\r\nSubject: Reklamacja\r\nMessage-ID: <id with space@example.pl>\r\n" +
		refs.String() + "Content-Type: text/plain; charset=utf-8\r\n\r\nMój ekspres SN-48213-PL nie działa, proszę o naprawę.\r\n")
	e := newEnv(t, &scripted{})
	out := e.proc.Process(context.Background(), processor.Input{Name: "in.eml", Raw: raw})
	if out.Status != triage.StatusReplied {
		t.Fatalf("status %s/%s: %s", out.Status, out.Reason, out.Detail)
	}
	sent, err := os.ReadFile(out.Reply.Path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := message.Parse(sent)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.References) != 21 || m.References[0] != "<r0@example.pl>" || m.References[20] != "<r1999@example.pl>" || m.InReplyTo != "" {
		t.Errorf("reply threading: In-Reply-To %q, %d References %v", m.InReplyTo, len(m.References), m.References)
	}
}

// TestDeadlineBoundsTheWholeEmail: the per-email deadline starts at the top
// of Process and bounds detection too: every model call's context ends by
// then, even with a long per-turn timeout.
func TestDeadlineBoundsTheWholeEmail(t *testing.T) {
	const deadline = 300 * time.Millisecond
	m := &scripted{block: true}
	e := newEnv(t, m, func(_ *agent.Config, pc *processor.Config) {
		pc.Bounds.Deadline, pc.Bounds.TurnTimeout = deadline, time.Hour
	})
	start := time.Now()
	out := e.proc.Process(context.Background(), processor.Input{Name: "in.eml",
		Raw: eml("anna@example.pl", "Pytanie", "Czy zatrudniacie programistów?")})
	end := time.Now()
	if out.Status != triage.StatusFailed || !strings.Contains(out.Detail, "deadline") {
		t.Errorf("outcome %s/%s %q, want failed at the deadline", out.Status, out.Reason, out.Detail)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.deadlines) == 0 {
		t.Fatal("no model call (detection should ask the model)")
	}
	for i, dl := range m.deadlines {
		// Process returns once its deadline has passed: no call may have
		// been given longer than that.
		if dl.IsZero() || dl.After(end) {
			t.Errorf("model call %d: context deadline %v after start, past the end of Process (%v); the email's deadline is %v", i, dl.Sub(start), end.Sub(start), deadline)
		}
	}
}
