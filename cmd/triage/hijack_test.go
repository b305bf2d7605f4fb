package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"
)

// TestProcessReusedMessageIDDoesNotMisrouteAConversation attacks `triage
// process` as a stranger would: Eve knows the Message-ID of Anna's email (it
// travels in every Cc and forward). She writes a follow-up on her own, older
// ticket that carries Anna's Message-ID, then asks for a manager, so a person
// owns Eve's ticket. Anna's genuine follow-up, answering our reply and
// tagged with her ticket, must still reach Anna's ticket and be answered.
func TestProcessReusedMessageIDDoesNotMisrouteAConversation(t *testing.T) {
	dir := t.TempDir()
	send := func(name, from, subject, messageID, inReplyTo, references, body string) conversationOutcome {
		t.Helper()
		h := "From: " + from + "\r\nTo: serwis@example.com\r\nSubject: " + subject + "\r\nDate: " + nowRFC() +
			"\r\nMessage-ID: " + messageID + "\r\n"
		if inReplyTo != "" {
			h += "In-Reply-To: " + inReplyTo + "\r\nReferences: " + references + "\r\n"
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(h+"Content-Type: text/plain; charset=utf-8\r\n\r\n"+body+"\r\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stdout, stderr := runCLI(t, "", "process", "--json", "--warranty-csv", "../../examples/warranty.csv",
			"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", filepath.Join(dir, "outbox"),
			"--staff", "kierownik@example.com", path)
		outs := decodeOutcomes(t, stdout)
		if len(outs) != 1 {
			t.Fatalf("%s: %d outcomes\n%s", name, len(outs), stderr)
		}
		o := outs[0]
		got := conversationOutcome{Status: o.Status, Reason: o.Reason, TicketID: o.TicketID, Followup: o.Followup}
		if o.Reply != nil {
			got.ReplyID = o.Reply.MessageID
		}
		return got
	}
	const (
		eve       = "Ewa <eve@example.net>"
		anna      = "Anna <anna@example.pl>"
		annaFirst = "<anna-1@example.pl>"
		complaint = "Dzień dobry, mój ekspres SN-48213-PL nie działa. Proszę o naprawę gwarancyjną."
	)
	// Eve's own ticket is the older one.
	eve1 := send("eve1.eml", eve, "Reklamacja", "<eve-1@example.net>", "", "", complaint)
	anna1 := send("anna1.eml", anna, "Reklamacja", annaFirst, "", "", complaint)
	if eve1.TicketID != "TKT-000001" || anna1.TicketID != "TKT-000002" || eve1.ReplyID == "" || anna1.ReplyID == "" {
		t.Fatalf("first emails: eve %+v, anna %+v", eve1, anna1)
	}
	// Eve's follow-up on her own ticket reuses Anna's Message-ID.
	send("eve2.eml", eve, "Re: Reklamacja [TKT-000001]", annaFirst, eve1.ReplyID, "<eve-1@example.net> "+eve1.ReplyID,
		"Nadal nie działa, co dalej?")
	// Then asks for a manager: a person owns Eve's ticket.
	eve3 := send("eve3.eml", eve, "Re: Reklamacja [TKT-000001]", "<eve-3@example.net>", eve1.ReplyID,
		"<eve-1@example.net> "+eve1.ReplyID, "Proszę o rozmowę z kierownikiem.")
	if eve3.TicketID != "TKT-000001" {
		t.Fatalf("eve's escalation: %+v", eve3)
	}
	// Anna's genuine follow-up answers our reply to her and carries her tag.
	got := send("anna2.eml", anna, "Re: Reklamacja [TKT-000002]", "<anna-2@example.pl>", anna1.ReplyID,
		annaFirst+" "+anna1.ReplyID, "Kiedy kurier odbierze ekspres?")
	got.ReplyID = ""
	want := conversationOutcome{Status: triage.StatusReplied, TicketID: "TKT-000002", Followup: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Anna's follow-up (-want +got):\n%s", diff)
	}
}

// conversationOutcome is the part of an outcome that says where an email
// went in its conversation.
type conversationOutcome struct {
	Status   triage.Status
	Reason   triage.Reason
	TicketID string
	Followup bool
	ReplyID  string
}
