package tickets

import (
	"context"
	"testing"

	"triage/internal/testkit/pgtest"
)

// TestNULInNote: a follow-up whose text holds a NUL byte is noted on its
// ticket on both backends (PostgreSQL's text would refuse it), and the
// conversation reads back with the NUL as U+FFFD.
func TestNULInNote(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		s, err := OpenSQLite(target)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		tk, err := s.Create(ctx, Request{SerialNumber: "SN1", CustomerEmail: "c@x", Priority: "normal", IdempotencyKey: "k1", MessageID: "<m1@x>"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddNote(ctx, tk.TicketID, Note{MessageID: "<m2@x>", From: "c@x", Subject: "Re:\x00", Text: "a\x00b"}); err != nil {
			t.Fatalf("add note: %v", err)
		}
		st, err := s.Get(ctx, tk.TicketID)
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if len(st.Notes) != 1 || st.Notes[0].Text != "a\uFFFDb" || st.Notes[0].Subject != "Re:\uFFFD" {
			t.Errorf("notes %+v, want one with the NUL as U+FFFD", st.Notes)
		}
	})
}
