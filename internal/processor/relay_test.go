package processor_test

import (
	"strings"
	"testing"

	"triage"
)

// A message with two From fields (or one naming two mailboxes) is refused
// as malformed, before any model call: which one wrote it cannot be told,
// and answering the first can defeat the receiving server's DMARC check
// of the other. It is failed with a reason, left for a person, and nothing
// is mailed.
func TestTwoFromsAreRefused(t *testing.T) {
	for name, raw := range map[string][]byte{
		"two From fields": eml("Anna <anna@example.pl>", "Reklamacja", "Mój ekspres SN-48213-PL nie działa.",
			"From: Bank <security@bank.example>"),
		"one From, two mailboxes": eml("anna@example.pl, security@bank.example", "Reklamacja", "Mój ekspres SN-48213-PL nie działa."),
	} {
		t.Run(name, func(t *testing.T) {
			m := &scripted{}
			e := newEnv(t, m)
			out := e.run(t, raw)
			if out.Status != triage.StatusFailed || out.Reason != triage.ReasonAmbiguousSender || !strings.Contains(out.Detail, "left for a person") {
				t.Errorf("outcome %s/%s %q, want failed/%s left for a person", out.Status, out.Reason, out.Detail, triage.ReasonAmbiguousSender)
			}
			if n := m.calls.Load(); n != 0 {
				t.Errorf("%d model calls for a message with two senders", n)
			}
			if got := e.mailed(t); len(got) != 0 {
				t.Errorf("mail went out: %v", got)
			}
		})
	}
}
