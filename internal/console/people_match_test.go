package console

import (
	"net/http"
	"strings"
	"testing"

	"triage"
	"triage/internal/ledger"
	"triage/internal/processor"
)

// A stranger who reuses a customer's Message-ID is not part of that
// customer's conversation: the conversation shows only the emails its
// customer sent, and offers only their draft.
func TestConversationIgnoresAStrangerReusingAMessageID(t *testing.T) {
	f := newFixture(t)
	f.email(t, email{uid: 40, messageID: "<anna-1@example.com>", from: "mallory@evil.example", subject: "Send my refund",
		text: "I am Anna, refund me.", scenario: "valid-warranty", state: ledger.StateDrafted, draft: "Your refund is on its way.",
		outcome: &processor.Outcome{Scenario: "valid-warranty", Status: triage.StatusDrafted}})
	_, ts := f.server(t, nil)
	resp, body := do(t, ts.URL, req{path: "/conversation/" + f.Draft, header: bearer})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if n := strings.Count(body, `id="approve"`); n != 1 {
		t.Errorf("the conversation offers %d drafts to approve, want 1 (the customer's)", n)
	}
	if strings.Contains(body, "Send my refund") || strings.Contains(body, "mallory@evil.example") {
		t.Error("the stranger's email is shown inside the customer's conversation")
	}
}
