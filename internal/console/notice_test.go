package console

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"triage"
	"triage/internal/ledger"
	"triage/internal/processor"
)

// An escalation whose staff notice a notice bound refused waits in the
// queue marked "notice suppressed": staff were not told, so the queue is
// where a person learns of it. Other mail over a limit carries no mark.
func TestQueueMarksSuppressedNotice(t *testing.T) {
	f := newFixture(t)
	f.Clock.Set(time.Date(2026, 11, 24, 8, 30, 0, 0, time.UTC))
	ola := f.email(t, email{uid: 6, messageID: "<ola-1@example.pl>", from: "ola@example.pl", subject: "Skandal",
		text: "Żądam rozmowy z kierownikiem.", scenario: "escalation", state: ledger.StateOverLimit, reason: triage.ReasonNoticeGlobalLimit,
		outcome: &processor.Outcome{Scenario: "escalation", Status: triage.StatusFailed, Reason: triage.ReasonNoticeGlobalLimit,
			Detail: processor.NoticeSuppressedMark + "staff notice not sent", NoticeSuppressed: true}}).Ref()
	f.email(t, email{uid: 7, messageID: "<flood-9@spam.example>", from: "flood@spam.example", subject: "Hi",
		text: "Hi", scenario: "general", state: ledger.StateOverLimit, reason: triage.ReasonPerSenderLimit,
		outcome: &processor.Outcome{Scenario: "general", Status: triage.StatusFailed, Reason: triage.ReasonPerSenderLimit}})
	_, ts := f.server(t, nil)
	resp, body := do(t, ts.URL, req{path: "/queue", header: bearer})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if n := strings.Count(body, ">notice suppressed<"); n != 1 {
		t.Errorf("%d notice suppressed marks in the queue, want 1", n)
	}
	marked := map[bool]int{}
	for _, row := range strings.Split(body, "<tr>") {
		if strings.Contains(row, "/conversation/") {
			marked[strings.Contains(row, "/conversation/"+ola) == strings.Contains(row, ">notice suppressed<")]++
		}
	}
	if marked[false] != 0 || marked[true] == 0 {
		t.Errorf("rows marked right/wrong: %v; only the row of %s should be marked:\n%s", marked, ola, body)
	}
}
