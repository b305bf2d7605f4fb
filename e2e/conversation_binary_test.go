package e2e

// Conversations through the real binary and a real IMAP server: follow-ups
// found through the Message-IDs the server holds (our reply read back from
// the Sent folder), a crash between the follow-up's note and its reply, the
// third message escalated to staff, a taken-over conversation left in the
// failed folder, and a person's reply in the Sent folder taking over.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/message"
	"triage/internal/watch"
)

func TestBinaryConversation(t *testing.T) {
	conversationEndToEnd(t, newWorld(t, "  staff: [kierownik@example.com]\n"))
}

func TestDovecotBinaryConversation(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	conversationEndToEnd(t, newWorldFor(t, tgt, "  staff: [kierownik@example.com]\n"))
}

func (w *world) once() {
	w.t.Helper()
	if code, out := w.run("watch", "--config", w.config, "--once"); code != 0 {
		w.t.Fatalf("watch --once: exit %d\n%s", code, out)
	}
}

// followUp delivers the customer's answer in the thread of refs.
func (w *world) followUp(n int, text string, refs ...string) string {
	id := fmt.Sprintf("<follow-%d@customer.example>", n)
	raw := fmt.Sprintf("From: Klient 0 <klient0@customer.example>\r\nTo: serwis@example.com\r\nSubject: Re: Reklamacja 0\r\nMessage-ID: %s\r\nIn-Reply-To: %s\r\nReferences: %s\r\nDate: Tue, 17 Nov 2026 09:00:00 +0100\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n%s\r\n",
		id, refs[len(refs)-1], strings.Join(refs, " "), text)
	w.tgt.Append(w.t, "INBOX", []byte(raw))
	return id
}

// ticket reads the ticket from the store the binary writes.
func (w *world) ticket(id string) *tickets.State {
	w.t.Helper()
	s, err := tickets.OpenSQLite(filepath.Join(w.dir, "tickets.db"))
	if err != nil {
		w.t.Fatal(err)
	}
	defer s.Close()
	st, err := s.Get(context.Background(), id)
	if err != nil {
		w.t.Fatal(err)
	}
	return st
}

// replyTo returns our reply to the inbound Message-ID as the server's Sent
// folder holds it.
func (w *world) replyTo(inbound string) *message.Message {
	w.t.Helper()
	var found *message.Message
	for _, m := range w.folder("Sent") {
		if headerOf(m.Raw, "In-Reply-To") == inbound {
			msg, err := message.Parse(m.Raw)
			if err != nil {
				w.t.Fatal(err)
			}
			if found != nil {
				w.t.Fatalf("two replies to %s in Sent", inbound)
			}
			found = msg
		}
	}
	if found == nil {
		w.t.Fatalf("no reply to %s in the Sent folder", inbound)
	}
	return found
}

// noteIDs lists the notes of the customer's mail (triage's own notes,
// what became of each hand-off, are left out).
func noteIDs(st *tickets.State) []string {
	var ids []string
	for _, n := range st.Notes {
		if n.From != "triage" {
			ids = append(ids, n.MessageID)
		}
	}
	return ids
}

// answers counts the sink's mail to the customer in reply to id (staff
// notices are threaded under the customer's email too).
func (w *world) answers(id string) int {
	n := 0
	for _, m := range w.sink.Messages() {
		if m.Header("In-Reply-To") == id && !strings.Contains(strings.Join(m.To, ","), "kierownik@example.com") {
			n++
		}
	}
	return n
}

func conversationEndToEnd(t *testing.T, w *world) {
	const ticket = "TKT-000001"
	first := w.deliver(0) // a valid warranty: a ticket is opened
	w.once()
	r1 := w.replyTo(first.ID)
	if !strings.HasSuffix(r1.Subject, "["+ticket+"]") {
		t.Fatalf("first reply subject %q lacks the ticket tag", r1.Subject)
	}

	// The customer answers our reply: the References name the Message-ID the
	// server holds for it.
	second := w.followUp(1, "Dopiszę, że ekspres także przecieka.", first.ID, r1.MessageID)
	w.once()
	r2 := w.replyTo(second)
	if !strings.HasSuffix(r2.Subject, "["+ticket+"]") {
		t.Errorf("follow-up reply subject %q", r2.Subject)
	}
	st := w.ticket(ticket)
	if diff := cmp.Diff([]string{second}, noteIDs(st)); diff != "" {
		t.Errorf("notes after the follow-up (-want +got):\n%s", diff)
	}
	if !st.Has(r1.MessageID) || !st.Has(r2.MessageID) {
		t.Errorf("our replies are not messages of the ticket: %+v", st.Messages)
	}

	// The third message: killed after its note was written, before any
	// reply (the model hangs); the rerun escalates it, with one note.
	third := w.followUp(2, "Nadal czekam na odpowiedź.", first.ID, r1.MessageID, second, r2.MessageID)
	cmd := w.command("watch", "--config", w.config, "--offline-faults", "hang", "--turn-timeout", "1h")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	for len(w.ticket(ticket).Notes) < 2 {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if n := w.answers(third); n != 0 {
		t.Fatalf("a reply to the third message went out before the crash")
	}
	w.once()
	st = w.ticket(ticket)
	if diff := cmp.Diff([]string{second, third}, noteIDs(st)); diff != "" {
		t.Errorf("notes after the crash and rerun (-want +got):\n%s", diff)
	}
	if n := w.answers(third); n != 1 {
		t.Errorf("third message answered %d times, want once", n)
	}
	if !st.AgentDisabled || st.Owner == "" {
		t.Errorf("the escalated conversation is not taken over: %+v", st)
	}
	// Staff had a notice for the second message (its reply promised the
	// consultant) and one for the escalation of the third.
	staff := map[string]int{}
	for _, m := range w.sink.Messages() {
		if strings.Contains(strings.Join(m.To, ","), "kierownik@example.com") {
			label, _, _ := strings.Cut(m.Header("Subject"), "]")
			staff[label+"]"]++
			if !strings.Contains(string(m.Data), ticket) {
				t.Errorf("the staff notice does not name the ticket")
			}
		}
	}
	if diff := cmp.Diff(map[string]int{"[triage hand-off]": 1, "[triage escalation]": 1}, staff); diff != "" {
		t.Errorf("staff notices by label (-want +got):\n%s", diff)
	}
	if e := w.entry(third); e.State != ledger.StateNeedsHuman || e.Reason != triage.ReasonEscalated {
		t.Errorf("the escalated message: ledger entry %+v, want needs_human/escalated", e)
	}

	// Taken over: the next follow-up is appended and left for the person in
	// the failed folder, unanswered.
	fourth := w.followUp(3, "Kiedy kurier?", first.ID, third)
	w.once()
	if n := w.answers(fourth); n != 0 {
		t.Errorf("a taken-over conversation was answered")
	}
	human := map[string]bool{}
	for _, m := range w.folder(watch.DefaultFailedFolder) {
		human[headerOf(m.Raw, "Message-ID")] = true
	}
	if !human[fourth] {
		t.Errorf("the follow-up of a taken-over conversation is not in %s", watch.DefaultFailedFolder)
	}
	if e := w.entry(fourth); e.State != ledger.StateNeedsHuman || e.Reason != "human_owner" {
		t.Errorf("ledger entry %+v, want needs_human/human_owner", e)
	}

	// Released, the conversation is answered again ...
	if code, out := w.run("tickets", "release", ticket, "--tickets-db", "tickets.db"); code != 0 {
		t.Fatalf("tickets release: %d %s", code, out)
	}
	fifth := w.followUp(4, "Jeszcze jedno pytanie o gwarancję.", first.ID, third)
	w.once()
	if n := w.answers(fifth); n != 1 {
		t.Fatalf("after release, the follow-up was answered %d times", n)
	}
	// ... until a person replies in the thread from their own mail program:
	// their reply, found in the Sent folder, takes the conversation over.
	person := "<person-1@example.com>"
	w.tgt.Append(t, "Sent", []byte("From: Anna Serwis <anna@example.com>\r\nTo: klient0@customer.example\r\nSubject: Re: Reklamacja 0\r\nMessage-ID: "+person+
		"\r\nIn-Reply-To: "+fifth+"\r\nReferences: "+first.ID+" "+fifth+"\r\nDate: Tue, 17 Nov 2026 12:00:00 +0100\r\n\r\nZadzwonię jutro.\r\n"))
	w.once()
	if st := w.ticket(ticket); !st.AgentDisabled || st.Owner != "Anna Serwis <anna@example.com>" || !st.Has(person) {
		t.Errorf("after a person's reply in Sent: %+v", st)
	}
	sixth := w.followUp(5, "Dziękuję, czekam na telefon.", first.ID, person)
	w.once()
	if n := w.answers(sixth); n != 0 {
		t.Errorf("answered a conversation a person took over by replying")
	}
	if e := w.entry(sixth); e.Reason != "human_owner" {
		t.Errorf("ledger entry %+v, want reason human_owner", e)
	}
}

// entry is the ledger's entry for an inbound Message-ID.
func (w *world) entry(id string) ledger.Entry {
	w.t.Helper()
	for _, e := range w.ledgerEntries() {
		if e.MessageID == id {
			return e
		}
	}
	w.t.Fatalf("no ledger entry for %s", id)
	return ledger.Entry{}
}
