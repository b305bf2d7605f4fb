package ledger

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"triage/internal/testkit/pgtest"
)

// TestNULInCustomerText: a customer's text with a NUL byte (and an invalid
// UTF-8 byte) keeps its outcome and its text on both backends, read back
// alike: those bytes as U+FFFD.
func TestNULInCustomerText(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		l := openAt(t, target, &now)
		loc := Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 7, UID: 1}
		subject := "Ekspres\x00 nie grzeje"
		if _, err := l.Claim(ctx, Entry{Loc: loc, Key: "k1", MessageID: "<nul@x>", Sender: "c@x", Subject: subject}, "A", time.Minute); err != nil {
			t.Fatal(err)
		}
		body := "Dzień dobry,\x00 ekspres \xff nie grzeje."
		outcome, _ := json.Marshal(map[string]string{"subject": subject, "detail": body})
		if err := l.SetOutcome(ctx, loc, outcome, body, Usage{Model: "m", Calls: 1}); err != nil {
			t.Fatalf("set outcome: %v", err)
		}
		got, err := l.ByMessageIDs(ctx, []string{"<nul@x>"})
		if err != nil || len(got) != 1 {
			t.Fatalf("by message id: %v, %v", got, err)
		}
		if want := "Dzień dobry,\uFFFD ekspres \uFFFD nie grzeje."; got[0].Body != want {
			t.Errorf("body %q, want %q", got[0].Body, want)
		}
		if got[0].Subject != "Ekspres\uFFFD nie grzeje" || string(got[0].Outcome) != string(outcome) {
			t.Errorf("subject %q, outcome %s; want the subject's NUL as U+FFFD, the outcome JSON as written", got[0].Subject, got[0].Outcome)
		}
	})
}
