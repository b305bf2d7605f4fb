package replies_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"triage"
	"triage/internal/replies"
	"triage/internal/testkit/pgtest"
)

// A person's reply is recorded under a key of its own, counts against the
// reply limits like triage's, is found as the answer of its email and
// listed for filing until appended; a young pending one is not taken for
// a crash's leftover; a composition is saved, replaced and dropped.
func TestPersonReplies(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
		s := openAt(t, target, &now)
		email := triage.Key("msgid:<a@x>|anna@example.com")
		lim := replies.Limits{PerAddress: 1, Window: time.Hour}
		rec := func() replies.Reply {
			k := replies.PersonKey(email)
			return replies.Reply{Key: k, MessageID: "<" + string(k) + ">", To: "anna@example.com", InboundFrom: "anna@example.com", Raw: []byte("raw"),
				Kind: replies.KindPerson, Author: "Lena", Answers: email, Account: "support@example.com", Mailbox: "INBOX"}
		}
		first := rec()
		if err := s.PutPendingWithin(ctx, first, lim); err != nil {
			t.Fatal(err)
		}
		var le *replies.LimitError
		if err := s.PutPendingWithin(ctx, rec(), lim); !errors.As(err, &le) {
			t.Errorf("a second reply to the same address within the window: %v, want a limit error", err)
		}
		if err := s.PutPendingWithin(ctx, replies.Reply{Key: "person:x", MessageID: "<x>", To: "b@x", Raw: []byte("r"), Kind: replies.KindPerson}, replies.Limits{}); err == nil {
			t.Error("a person's reply without its author and email was recorded")
		}
		if o, err := s.Orphaned(ctx, "support@example.com", "INBOX", replies.ReplyPending); err != nil || len(o) != 0 {
			t.Errorf("a reply being sent from the console is orphaned: %v, %v", o, err)
		}
		now = now.Add(replies.PersonSendBound + time.Minute)
		if o, err := s.Orphaned(ctx, "support@example.com", "INBOX", replies.ReplyPending); err != nil || len(o) != 1 {
			t.Errorf("a person's reply pending past the bound is not orphaned: %v, %v", o, err)
		}
		if err := s.MarkSent(ctx, first.Key); err != nil {
			t.Fatal(err)
		}
		ans, err := s.PersonAnswered(ctx, []triage.Key{email, "msgid:<b@x>|b@x"})
		if err != nil || len(ans) != 1 || !ans[email] {
			t.Errorf("answered %v, %v", ans, err)
		}
		if u, err := s.Unfiled(ctx, "support@example.com", "INBOX"); err != nil || len(u) != 1 || u[0].Author != "Lena" || u[0].Answers != email {
			t.Errorf("unfiled %+v, %v", u, err)
		}
		if err := s.MarkAppended(ctx, first.Key); err != nil {
			t.Fatal(err)
		}
		if u, err := s.Unfiled(ctx, "support@example.com", "INBOX"); err != nil || len(u) != 0 {
			t.Errorf("unfiled after filing %+v, %v", u, err)
		}
		counts, err := s.DraftCounts(ctx)
		if err != nil || len(counts) != 0 {
			t.Errorf("a person's reply counts as a draft: %+v, %v", counts, err)
		}

		for _, body := range []string{"Hel", "Hello Anna"} {
			if err := s.SaveComposition(ctx, email, "Max", body); err != nil {
				t.Fatal(err)
			}
		}
		if c, err := s.Composition(ctx, email); err != nil || c.Body != "Hello Anna" || c.Person != "Max" {
			t.Errorf("composition %+v, %v", c, err)
		}
		if err := s.DropComposition(ctx, email); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Composition(ctx, email); !errors.Is(err, replies.ErrNotFound) {
			t.Errorf("dropped composition: %v", err)
		}
	})
}
