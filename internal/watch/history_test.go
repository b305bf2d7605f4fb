package watch

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	tmail "triage/internal/clients/mail"
	"triage/internal/ledger"
	"triage/internal/replies"
)

// TestSenderIsTheReplyHistory: in watch the ledger is the pipeline's reply
// history (processor.History) through the LedgerSender, for loop breaking.
func TestSenderIsTheReplyHistory(t *testing.T) {
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{Path: filepath.Join(t.TempDir(), "ledger.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ob, err := replies.NewOutbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := replies.NewLedgerSender(replies.LedgerSenderConfig{Replies: l.Replies(), Next: ob, Domain: "example.com", Limits: Limits{}.Replies()})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Minute)
	rc, err := s.Send(ctx, &tmail.Reply{From: "serwis@example.com", To: "anna@example.pl", Subject: "Re: x", Body: "x", Key: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.SentReply(ctx, rc.MessageID); !ok || err != nil {
		t.Errorf("SentReply(%s) = %v, %v; want true", rc.MessageID, ok, err)
	}
	if ok, _ := s.SentReply(ctx, "<someone-else@example.com>"); ok {
		t.Error("SentReply of a foreign Message-ID = true")
	}
	if n, err := s.RepliesSince(ctx, "anna@example.pl", start); n != 1 || err != nil {
		t.Errorf("RepliesSince = %d, %v; want 1", n, err)
	}
}
