package processor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/agent"
	"triage/internal/processor"
)

// TestPerSenderLimit: challenges from one address, each with a new
// Message-ID and no threading header, are answered up to the limit (as in
// watch); the next is failed/per_sender_limit before any model call. A
// Reply-To at the limit counts as much as the From.
func TestPerSenderLimit(t *testing.T) {
	m := &scripted{}
	e := newEnv(t, m, noConversations, func(_ *agent.Config, pc *processor.Config) { pc.PerSenderLimit = 5 })
	challenge := func(n int, from string, extra ...string) processor.Outcome {
		t.Helper()
		body := fmt.Sprintf("Your message is held (%d). Reply to this message to have it delivered.", n)
		extra = append(extra, fmt.Sprintf("Message-ID: <challenge-%d@filter.example.net>", n))
		raw := strings.Replace(string(eml(from, "Please verify your message", body, extra...)),
			fmt.Sprintf("Message-ID: <%x@example.pl>\r\n", len(body)+len("Please verify your message")), "", 1)
		return e.proc.Process(context.Background(), processor.Input{Name: fmt.Sprintf("%d.eml", n), Raw: []byte(raw)})
	}
	var got []string
	for n := 1; n <= 6; n++ {
		o := challenge(n, "verify@filter.example.net")
		got = append(got, string(o.Status)+"/"+string(o.Reason))
	}
	calls := m.calls.Load()
	viaReplyTo := challenge(7, "other@filter.example.net", "Reply-To: verify@filter.example.net")
	got = append(got, string(viaReplyTo.Status)+"/"+string(viaReplyTo.Reason))
	want := []string{"replied/", "replied/", "replied/", "replied/", "replied/",
		"failed/per_sender_limit", "failed/per_sender_limit"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if m.calls.Load() != calls {
		t.Errorf("a message over the limit reached the model")
	}
	if !strings.Contains(viaReplyTo.Detail, "verify@filter.example.net") || !strings.Contains(viaReplyTo.Detail, "limit 5") {
		t.Errorf("detail %q should name the address and the limit", viaReplyTo.Detail)
	}
}

// TestMachinesWithoutSenderAreSkipped: a bounce with From <> or an
// unparseable From is skipped as a bounce, not left for a person as
// no_sender; a person's unparseable From still is; a Polish customer whose
// subject starts with "Auto:" (car) is answered.
func TestMachinesWithoutSenderAreSkipped(t *testing.T) {
	e := newEnv(t, &scripted{}, noConversations)
	tests := []struct {
		name, from, subject, body string
		want                      string
	}{
		{"null From", "<>", "Warning: could not send message for past 4 hours", "The message has not been delivered yet.", "skipped/" + string(triage.ReasonBounce)},
		{"unparseable bounce", "Mail Delivery Subsystem <MAILER-DAEMON@>", "Returned mail: see transcript", "----- The following addresses had permanent fatal errors -----", "skipped/" + string(triage.ReasonBounce)},
		{"unparseable person", "Jan Kowalski <jan.kowalski@>", "Reklamacja ekspresu", "Dzień dobry, mój ekspres przecieka.", "failed/" + string(triage.ReasonNoSender)},
		{"Polish car", "Marek <marek@example.pl>", "Auto: radio samochodowe nie działa, SN-48213-PL", "Dzień dobry, radio w aucie nie działa. Proszę o naprawę.", "replied/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := e.run(t, eml(tt.from, tt.subject, tt.body))
			if got := string(o.Status) + "/" + string(o.Reason); got != tt.want {
				t.Errorf("outcome %s (%s), want %s", got, o.Detail, tt.want)
			}
		})
	}
}

// The detail of an outcome quotes what the sender wrote (here the
// List-Id that made it skipped) and is cut to triage.MaxDetail, however
// long the header.
func TestOutcomeDetailIsBounded(t *testing.T) {
	e := newEnv(t, &scripted{}, noConversations)
	list := "<" + strings.Repeat("ż", 20000) + ".lists.example.net>"
	o := e.run(t, eml("news@example.net", "Newsletter", "Nowości w sklepie.", "List-Id: "+list))
	if o.Status != triage.StatusSkipped || o.Reason != triage.ReasonList {
		t.Fatalf("outcome %s/%s, want skipped/%s", o.Status, o.Reason, triage.ReasonList)
	}
	if len(o.Detail) > triage.MaxDetail || !utf8.ValidString(o.Detail) {
		t.Errorf("detail of %d bytes (valid UTF-8: %v), want at most %d", len(o.Detail), utf8.ValidString(o.Detail), triage.MaxDetail)
	}
	if !strings.HasPrefix(o.Detail, "List-Id: <żż") || !strings.HasSuffix(o.Detail, "…") {
		t.Errorf("detail %.40q…%q should name the header and mark the cut", o.Detail, o.Detail[max(len(o.Detail)-10, 0):])
	}
}
