package processor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/clients/tickets"
	"triage/internal/message"
	"triage/internal/processor"
)

// convEmail is a customer email with a fixed Message-ID and optional
// threading headers.
func convEmail(from, subject, msgID, body string, extra ...string) []byte {
	h := "From: " + from + "\r\nTo: serwis@example.com\r\nSubject: " + subject +
		"\r\nDate: Mon, 16 Nov 2026 10:00:00 +0100\r\nMessage-ID: " + msgID + "\r\n"
	for _, e := range extra {
		h += e + "\r\n"
	}
	return []byte(h + "Content-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n")
}

const (
	anna    = "Anna <anna@example.pl>"
	first   = "<a1@example.pl>"
	boss    = "boss@example.com"
	firstTx = "Dzień dobry, mój ekspres SN-48213-PL nie działa. Proszę o naprawę gwarancyjną."
)

// conv is the part of an outcome the conversation tests compare.
type conv struct {
	Status              triage.Status
	Reason              triage.Reason
	Scenario            string
	TicketID            string
	Followup, Escalated bool
	Calls               []string
}

func convOf(o processor.Outcome) conv {
	s := summarize(o)
	return conv{o.Status, o.Reason, o.Scenario, o.TicketID, o.Followup, o.Escalated, s.Calls}
}

func (e *env) run(t *testing.T, raw []byte) processor.Outcome {
	t.Helper()
	return e.proc.Process(context.Background(), processor.Input{Name: "in.eml", Raw: raw})
}

// seed processes the first email of the conversation: a ticket is opened,
// the reply carries its tag.
func seed(t *testing.T, e *env) processor.Outcome {
	t.Helper()
	out := e.run(t, convEmail(anna, "Reklamacja", first, firstTx))
	want := conv{Status: "replied", Scenario: "valid-warranty", TicketID: "TKT-000001",
		Calls: []string{"check_warranty ok", "create_ticket ok", "send_email ok"}}
	if diff := cmp.Diff(want, convOf(out)); diff != "" {
		t.Fatalf("first email (-want +got):\n%s\n%s", diff, out.Detail)
	}
	if out.Reply.Subject != "Re: Reklamacja [TKT-000001]" {
		t.Errorf("reply subject = %q: the pipeline must tag it", out.Reply.Subject)
	}
	raw, err := os.ReadFile(out.Reply.Path)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := message.Parse(raw); m == nil || m.Subject != "Re: Reklamacja [TKT-000001]" {
		t.Errorf("sent subject = %+v", m)
	}
	return out
}

// notes lists the ticket's notes from the customer's mail (triage's own
// notes, what became of a hand-off, are left out: see triageNotes).
func notes(t *testing.T, e *env, id string) []string {
	t.Helper()
	st, err := e.tickets.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range st.Notes {
		if n.From != processor.NoteAuthor {
			out = append(out, n.MessageID+" "+n.Text)
		}
	}
	return out
}

// triageNotes lists the texts of the notes triage itself added.
func triageNotes(t *testing.T, e *env, id string) []string {
	t.Helper()
	st, err := e.tickets.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range st.Notes {
		if n.From == processor.NoteAuthor {
			out = append(out, n.Text)
		}
	}
	return out
}

func followUp(reply processor.Outcome, msgID, body string) []byte {
	return convEmail(anna, "Re: Reklamacja [TKT-000001]", msgID, body,
		"In-Reply-To: "+reply.Reply.MessageID, "References: "+first+" "+reply.Reply.MessageID)
}

var followUpCalls = []string{"notify_staff ok", "send_email ok"}

// fromStranger is an email from another address naming Anna's thread in
// In-Reply-To/References (not the tag).
func fromStranger(reply processor.Outcome, msgID string) []byte {
	return convEmail("eve@example.net", "Re: Reklamacja", msgID, firstTx,
		"In-Reply-To: "+reply.Reply.MessageID, "References: "+first+" "+reply.Reply.MessageID)
}

// seedTakenOver seeds the conversation, lets anna.k take it over and makes
// the model fail if it is called.
func seedTakenOver(t *testing.T) (*scripted, *env, processor.Outcome) {
	t.Helper()
	m := &scripted{}
	e := newEnv(t, m)
	reply := seed(t, e)
	if err := e.tickets.Takeover(context.Background(), "TKT-000001", "anna.k"); err != nil {
		t.Fatal(err)
	}
	m.err = errors.New("the model must not be called for a taken-over conversation")
	return m, e, reply
}

func TestFollowUpByReferences(t *testing.T) {
	m := &scripted{}
	e := newEnv(t, m)
	reply := seed(t, e)
	// The customer answers our reply: References name our reply's Message-ID.
	// The subject has no tag here, so only the References can match.
	raw := convEmail(anna, "Re: Reklamacja", "<a2@example.pl>", "Nadal nie działa, co dalej?",
		"In-Reply-To: "+reply.Reply.MessageID, "References: "+first+" "+reply.Reply.MessageID)
	var replies []string
	for range 2 { // processed twice (a retry): one note, one reply Message-ID
		out := e.run(t, raw)
		want := conv{Status: "replied", Scenario: "follow-up", TicketID: "TKT-000001", Followup: true, Calls: followUpCalls}
		if diff := cmp.Diff(want, convOf(out)); diff != "" {
			t.Fatalf("follow-up (-want +got):\n%s\n%s", diff, out.Detail)
		}
		if out.Reply.Subject != "Re: Reklamacja [TKT-000001]" {
			t.Errorf("reply subject = %q", out.Reply.Subject)
		}
		replies = append(replies, out.Reply.MessageID)
	}
	if replies[0] != replies[1] {
		t.Errorf("retry changed the reply Message-ID: %v", replies)
	}
	if diff := cmp.Diff([]string{"<a2@example.pl> Nadal nie działa, co dalej?"}, notes(t, e, "TKT-000001")); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	// The model saw the ticket in the trusted facts.
	f := m.facts.Load()
	if f.Ticket == nil || f.Ticket.ID != "TKT-000001" || f.Ticket.Messages != 2 || f.Ticket.Status != "open" {
		t.Fatalf("facts.ticket = %+v", f.Ticket)
	}
	var who []string
	for _, h := range f.Ticket.History {
		who = append(who, h.From+": "+h.Subject)
	}
	if diff := cmp.Diff([]string{"customer: Reklamacja", "us: Re: Reklamacja [TKT-000001]", "us: Re: Reklamacja [TKT-000001]"}, who); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	// Our follow-up reply is part of the conversation too.
	st, _ := e.tickets.Get(context.Background(), "TKT-000001")
	if !st.Has(replies[0]) || !st.Has("<a2@example.pl>") {
		t.Errorf("ticket messages %+v lack the follow-up or our answer", st.Messages)
	}
}

func TestFollowUpByTag(t *testing.T) {
	e := newEnv(t, &scripted{})
	seed(t, e)
	// A new email (no References) with the tag, from the ticket's customer.
	out := e.run(t, convEmail("anna@example.pl", "Re: Reklamacja [TKT-000001]", "<a3@example.pl>", "Wysłałam zdjęcie usterki."))
	want := conv{Status: "replied", Scenario: "follow-up", TicketID: "TKT-000001", Followup: true, Calls: followUpCalls}
	if diff := cmp.Diff(want, convOf(out)); diff != "" {
		t.Fatalf("(-want +got):\n%s\n%s", diff, out.Detail)
	}
	if n := notes(t, e, "TKT-000001"); len(n) != 1 {
		t.Errorf("notes = %v", n)
	}
}

func TestForgedTagStartsANewConversation(t *testing.T) {
	e := newEnv(t, &scripted{})
	seed(t, e)
	out := e.run(t, convEmail("eve@example.net", "Re: Reklamacja [TKT-000001]", "<e1@example.net>", firstTx))
	want := conv{Status: "replied", Scenario: "valid-warranty", TicketID: "TKT-000002",
		Calls: []string{"check_warranty ok", "create_ticket ok", "send_email ok"}}
	if diff := cmp.Diff(want, convOf(out)); diff != "" {
		t.Fatalf("(-want +got):\n%s\n%s", diff, out.Detail)
	}
	if n := notes(t, e, "TKT-000001"); len(n) != 0 {
		t.Errorf("the forged email was appended to the victim's ticket: %v", n)
	}
}

// A stranger who knows a Message-ID of Anna's thread (it travels in every
// Cc and forward) and names it in In-Reply-To/References does not join her
// ticket: the model never sees her history, nothing is appended to it, and
// the stranger's email is a conversation of its own.
func TestReferencesFromAnotherAddressStartsANewConversation(t *testing.T) {
	m := &scripted{}
	e := newEnv(t, m)
	reply := seed(t, e)
	out := e.run(t, fromStranger(reply, "<e2@example.net>"))
	want := conv{Status: "replied", Scenario: "valid-warranty", TicketID: "TKT-000002",
		Calls: []string{"check_warranty ok", "create_ticket ok", "send_email ok"}}
	if diff := cmp.Diff(want, convOf(out)); diff != "" {
		t.Fatalf("(-want +got):\n%s\n%s", diff, out.Detail)
	}
	if f := m.facts.Load(); f.Ticket != nil && f.Ticket.ID == "TKT-000001" {
		t.Errorf("the stranger's facts show Anna's ticket: %+v", f.Ticket)
	}
	if n := notes(t, e, "TKT-000001"); len(n) != 0 {
		t.Errorf("the stranger's email was appended to Anna's ticket: %v", n)
	}
	st, _ := e.tickets.Get(context.Background(), "TKT-000001")
	if st.Has("<e2@example.net>") {
		t.Errorf("the stranger's message joined Anna's ticket: %+v", st.Messages)
	}
}

func TestTakenOverConversation(t *testing.T) {
	m, e, reply := seedTakenOver(t)
	out := e.run(t, followUp(reply, "<a2@example.pl>", "Halo?"))
	want := conv{Status: "skipped", Reason: "human_owner", TicketID: "TKT-000001", Followup: true}
	if diff := cmp.Diff(want, convOf(out)); diff != "" {
		t.Fatalf("(-want +got):\n%s\n%s", diff, out.Detail)
	}
	if out.Reply != nil || out.ModelCalls != 0 || !strings.Contains(out.Detail, "anna.k") {
		t.Errorf("outcome %+v", out)
	}
	if diff := cmp.Diff([]string{"<a2@example.pl> Halo?"}, notes(t, e, "TKT-000001")); diff != "" {
		t.Errorf("the follow-up must still be appended (-want +got):\n%s", diff)
	}
	// Released: answered again.
	if err := e.tickets.Release(context.Background(), "TKT-000001"); err != nil {
		t.Fatal(err)
	}
	m.err = nil
	if out := e.run(t, followUp(reply, "<a2@example.pl>", "Halo?")); out.Status != "replied" || len(notes(t, e, "TKT-000001")) != 1 {
		t.Errorf("after release: %s %s, notes %v", out.Status, out.Detail, notes(t, e, "TKT-000001"))
	}
}

// TestThirdMessageEscalates: the customer's third message on one
// conversation goes to staff whatever it says, and the conversation is
// then taken over.
func TestThirdMessageEscalates(t *testing.T) {
	e := newEnvStaff(t, &scripted{}, []string{"Kierownik <" + boss + ">"})
	reply := seed(t, e)
	if out := e.run(t, followUp(reply, "<a2@example.pl>", "Nadal czekam.")); out.Scenario != "follow-up" {
		t.Fatalf("second message: %s %s", out.Scenario, out.Detail)
	}
	out := e.run(t, followUp(reply, "<a3@example.pl>", "Nadal czekam na odpowiedź."))
	want := conv{Status: "replied", Scenario: "escalation", TicketID: "TKT-000001", Followup: true, Escalated: true,
		Calls: []string{"notify_staff ok", "send_email ok"}}
	if diff := cmp.Diff(want, convOf(out)); diff != "" {
		t.Fatalf("(-want +got):\n%s\n%s", diff, out.Detail)
	}
	if !strings.Contains(out.Detection.Reason, "message 3") {
		t.Errorf("detection reason = %q", out.Detection.Reason)
	}
	if out.Reply.To != "anna@example.pl" {
		t.Errorf("the acknowledgement went to %q", out.Reply.To)
	}
	st, _ := e.tickets.Get(context.Background(), "TKT-000001")
	if !st.AgentDisabled || st.Owner != processor.OwnerEscalated {
		t.Errorf("ticket not taken over: %+v", st)
	}
	// The staff notice went to staff only, and is not the customer's
	// reply; the second message's reply promised the consultant, so staff
	// had a hand-off notice for it before.
	staffMail := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(e.outbox, "*.eml"))
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		m, err := message.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.To) == 1 && m.To[0] == boss {
			label, _, _ := strings.Cut(m.Subject, "]")
			staffMail[label+"]"]++
			if m.MessageID == out.Reply.MessageID {
				t.Error("the staff notice is the customer's reply")
			}
		}
	}
	if diff := cmp.Diff(map[string]int{"[triage escalation]": 1, "[triage hand-off]": 1}, staffMail); diff != "" {
		t.Errorf("staff notices by label (-want +got):\n%s", diff)
	}
	// The next follow-up is left for the person.
	out = e.run(t, followUp(reply, "<a4@example.pl>", "Dziękuję."))
	if out.Status != "skipped" || out.Reason != "human_owner" {
		t.Errorf("after escalation: %s %s", out.Status, out.Reason)
	}
	// Released by the person: only the third message escalates, the fifth
	// is a follow-up again.
	if err := e.tickets.Release(context.Background(), "TKT-000001"); err != nil {
		t.Fatal(err)
	}
	out = e.run(t, convEmail(anna, "Re: Reklamacja [TKT-000001]", "<a5@example.pl>", "Jeszcze jedno pytanie.",
		"In-Reply-To: <a4@example.pl>", "References: "+first+" "+reply.Reply.MessageID+" <a4@example.pl>"))
	if out.Status != "replied" || out.Scenario != "follow-up" || out.Escalated {
		t.Errorf("after release: %s %s %s escalated=%v", out.Status, out.Scenario, out.Detail, out.Escalated)
	}
	// Past the third message the reply-loop bound applies again: a sixth
	// message answering one of our replies, after four replies within the
	// hour, is left for a person.
	out = e.run(t, followUp(reply, "<a6@example.pl>", "Halo?"))
	if out.Status != "failed" || out.Reason != "reply_loop" {
		t.Errorf("sixth message: %s %s %s", out.Status, out.Reason, out.Detail)
	}
}

func TestEscalationNewEmail(t *testing.T) {
	tests := []struct {
		name  string
		model *scripted
		staff []string
		body  string
		want  conv
	}{
		{
			name: "asks for a person", model: &scripted{}, staff: []string{boss},
			body: "Chcę porozmawiać z człowiekiem, a nie z automatem!",
			want: conv{Status: "replied", Scenario: "escalation", TicketID: "TKT-000001", Escalated: true, Calls: []string{"notify_staff ok", "send_email ok"}},
		},
		{
			name: "threatens legal action (English)", model: &scripted{}, staff: []string{boss},
			body: "This is unacceptable. My lawyer will take legal action.",
			want: conv{Status: "replied", Scenario: "escalation", TicketID: "TKT-000001", Escalated: true, Calls: []string{"notify_staff ok", "send_email ok"}},
		},
		{
			name: "no staff configured: left for a person", model: &scripted{err: errors.New("must not be called")},
			body: "Skandal! Pozew jest w drodze.",
			want: conv{Status: "failed", Reason: "no_staff", Scenario: "escalation"},
		},
		{
			name: "a model that skips notify_staff never reaches the customer", model: &scripted{skipNotify: true}, staff: []string{boss},
			body: "Chcę rozmawiać z kierownikiem.",
			want: conv{Status: "failed", Reason: "email_not_sent", Scenario: "escalation", TicketID: "TKT-000001",
				Calls: []string{"send_email blocked:requirement_not_met"}},
		},
		{
			// notify_staff is not the customer's reply: without send_email
			// the email is not handled, and nobody took it over.
			name: "staff notified but no reply to the customer", model: &scripted{onlyNotify: true}, staff: []string{boss},
			body: "Chcę rozmawiać z kierownikiem.",
			want: conv{Status: "failed", Reason: "email_not_sent", Scenario: "escalation", TicketID: "TKT-000001",
				Calls: []string{"notify_staff ok"}},
		},
		{
			name: "a model that mails staff with send_email is refused", model: &scripted{to: boss}, staff: []string{boss},
			body: "Chcę rozmawiać z kierownikiem.",
			want: conv{Status: "failed", Reason: "email_not_sent", Scenario: "escalation", TicketID: "TKT-000001",
				Calls: []string{"notify_staff ok", "send_email blocked:recipient_not_allowed"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnvStaff(t, tt.model, tt.staff)
			out := e.run(t, convEmail("ola@example.pl", "Skarga", "<o1@example.pl>", tt.body))
			if diff := cmp.Diff(tt.want, convOf(out)); diff != "" {
				t.Fatalf("(-want +got):\n%s\n%s", diff, out.Detail)
			}
			if tt.want.TicketID == "" {
				return
			}
			st, err := e.tickets.Get(context.Background(), tt.want.TicketID)
			if err != nil {
				t.Fatal(err)
			}
			if st.AgentDisabled != tt.want.Escalated || !st.Has("<o1@example.pl>") {
				t.Errorf("ticket %+v", st)
			}
		})
	}
}

// TestCrashBetweenNoteAndReply: the note is written, the reply is not (the
// model or the process died); the retry adds no second note and replies.
func TestCrashBetweenNoteAndReply(t *testing.T) {
	m := &scripted{}
	e := newEnv(t, m)
	reply := seed(t, e)
	raw := followUp(reply, "<a2@example.pl>", "Czy są już wieści?")
	m.err = errors.New("model died")
	if out := e.run(t, raw); out.Status != "failed" || out.TicketID != "TKT-000001" {
		t.Fatalf("first attempt: %+v", convOf(out))
	}
	m.err = nil
	out := e.run(t, raw)
	if out.Status != "replied" || out.Scenario != "follow-up" {
		t.Fatalf("retry: %+v %s", convOf(out), out.Detail)
	}
	if n := notes(t, e, "TKT-000001"); len(n) != 1 {
		t.Errorf("notes after a retry = %v, want one", n)
	}
}

// brokenStore fails every lookup: the email is failed, never answered as a
// new conversation.
type brokenStore struct{ *tickets.SQLite }

func (brokenStore) Find(context.Context, string, []string) (*tickets.State, error) {
	return nil, errors.New("tickets: http: GET /tickets: 503 Service Unavailable")
}

func TestTicketStoreDown(t *testing.T) {
	e := newEnv(t, &scripted{})
	e2 := newEnvWithStore(t, &scripted{}, brokenStore{e.tickets})
	out := e2.run(t, convEmail(anna, "Reklamacja", first, firstTx))
	if out.Status != "failed" || out.Reason != "tickets_unavailable" || !strings.Contains(out.Detail, "503") {
		t.Errorf("outcome %+v: %s", convOf(out), out.Detail)
	}
}

// TestHTTPStoreAgentDisabled: a conversation the remote ticket service marks
// agent_disabled (a person took it over in the CRM) is left to them; the
// follow-up is posted to the ticket as a note.
func TestHTTPStoreAgentDisabled(t *testing.T) {
	var notes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/tickets" && slices.Contains(r.URL.Query()["message_id"], "<crm-reply@example.com>"):
			fmt.Fprint(w, `{"ticket_id":"TKT-000777","status":"open","customer_email":"anna@example.pl","agent_disabled":true,"owner":"crm:piotr",
				"messages":[{"message_id":"<crm-reply@example.com>","direction":"out"}],"notes":[]}`)
		case r.Method == http.MethodPost && r.URL.Path == "/tickets/TKT-000777/notes":
			var n tickets.Note
			json.NewDecoder(r.Body).Decode(&n)
			notes = append(notes, r.Header.Get("Idempotency-Key")+" "+n.Text)
			w.WriteHeader(http.StatusCreated)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	store, err := tickets.NewHTTP(tickets.HTTPConfig{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWithStore(t, &scripted{err: errors.New("the model must not be called")}, store)
	out := e.run(t, convEmail(anna, "Re: Reklamacja", "<a9@example.pl>", "Czy kurier już jedzie?", "In-Reply-To: <crm-reply@example.com>"))
	want := conv{Status: "skipped", Reason: "human_owner", TicketID: "TKT-000777", Followup: true}
	if diff := cmp.Diff(want, convOf(out)); diff != "" {
		t.Fatalf("(-want +got):\n%s\n%s", diff, out.Detail)
	}
	if diff := cmp.Diff([]string{"<a9@example.pl> Czy kurier już jedzie?"}, notes); diff != "" {
		t.Errorf("notes posted (-want +got):\n%s", diff)
	}
	if !strings.Contains(out.Detail, "crm:piotr") {
		t.Errorf("detail %q does not name the owner", out.Detail)
	}
}

// Someone other than the customer writing into a thread a person owns (a
// colleague in Cc, the customer from another address, a stranger who knows
// a Message-ID) is never answered automatically: skipped human_owner, left
// for the person, and not appended to the ticket.
func TestReferencesFromAnotherAddressIntoATakenOverThread(t *testing.T) {
	_, e, reply := seedTakenOver(t)
	out := e.run(t, fromStranger(reply, "<e3@example.net>"))
	want := conv{Status: "skipped", Reason: "human_owner", TicketID: "TKT-000001"}
	if diff := cmp.Diff(want, convOf(out)); diff != "" {
		t.Fatalf("(-want +got):\n%s\n%s", diff, out.Detail)
	}
	if out.Reply != nil || out.ModelCalls != 0 || !strings.Contains(out.Detail, "anna.k") {
		t.Errorf("outcome %+v", out)
	}
	if n := notes(t, e, "TKT-000001"); len(n) != 0 {
		t.Errorf("the stranger's email was appended: %v", n)
	}
}

// From costs nothing to forge: a stranger who writes Anna's From, names her
// thread (References or the tag) and puts their own address in Reply-To
// must not join her ticket, or her history (in the follow-up's facts)
// would be answered to the stranger.
func TestForgedFromWithAnotherReplyToDoesNotJoin(t *testing.T) {
	for _, how := range []string{"references", "tag"} {
		t.Run(how, func(t *testing.T) {
			m := &scripted{}
			e := newEnv(t, m)
			reply := seed(t, e)
			var extra []string
			subject := "Re: Reklamacja"
			if how == "references" {
				extra = []string{"In-Reply-To: " + reply.Reply.MessageID, "References: " + first + " " + reply.Reply.MessageID}
			} else {
				subject += " [TKT-000001]"
			}
			extra = append(extra, "Reply-To: eve@example.net")
			out := e.run(t, convEmail(anna, subject, "<e4@example.net>", firstTx, extra...))
			if out.Followup || out.TicketID == "TKT-000001" {
				t.Fatalf("joined Anna's ticket: %+v", convOf(out))
			}
			if f := m.facts.Load(); f.Ticket != nil {
				t.Errorf("facts show a ticket: %+v", f.Ticket)
			}
			if n := notes(t, e, "TKT-000001"); len(n) != 0 {
				t.Errorf("appended to Anna's ticket: %v", n)
			}
			// Nor is the stranger's Reply-To answered: it is outside the
			// From domain and the message is not authenticated.
			if out.Reply == nil || out.Reply.To != "anna@example.pl" {
				t.Errorf("reply %+v, want to the From address", out.Reply)
			}
		})
	}
}

// TestFollowUpTakesTheConversationsLanguage: a follow-up too short to tell
// its language ("Ok.", "Immer noch kaputt!") takes the language of the
// customer's earlier messages in the conversation (the follow-ups noted on
// the ticket), not the inbox's default; the same words opening a
// conversation get the default.
func TestFollowUpTakesTheConversationsLanguage(t *testing.T) {
	e := newEnv(t, &scripted{})
	opened := e.run(t, convEmail(anna, "Garantie", first,
		"Guten Tag, meine Kaffeemaschine SN-48213-PL heizt das Wasser nicht mehr. Bitte reparieren Sie sie im Rahmen der Garantie."))
	if opened.Language != "de" || opened.TicketID == "" {
		t.Fatalf("first email: language %s, ticket %q (%s %s)", opened.Language, opened.TicketID, opened.Status, opened.Detail)
	}
	for i, text := range []string{"Ich habe Ihnen gestern ein Foto der Fehlermeldung geschickt, bitte melden Sie sich.", "Ok.", "Immer noch kaputt!"} {
		short := e.run(t, convEmail("anna@example.pl", "Re: ["+opened.TicketID+"]", fmt.Sprintf("<a%d@example.pl>", i+2), text))
		if !short.Followup || short.Language != "de" {
			t.Errorf("follow-up %q: followup %v, language %s (%s %s %s); want the conversation's de", text, short.Followup, short.Language, short.Status, short.Reason, short.Detail)
		}
	}
	fresh := e.run(t, convEmail("bob@example.org", "Hilfe", "<b1@example.org>", "Immer noch kaputt!"))
	if fresh.Followup || fresh.Language != "pl" {
		t.Errorf("a new conversation: followup %v, language %s; want the default pl", fresh.Followup, fresh.Language)
	}
}

// TestLanguageOfTheTextFirst: the text is judged on its own: a Polish
// subject over a Portuguese or Spanish text made mixes lingua named Czech
// or German with confidence. Portuguese is a neighbour, and lingua's
// trigrams find no clear winner for the Spanish one: both get the default.
// A text too short to judge (a serial) is judged with its subject.
func TestLanguageOfTheTextFirst(t *testing.T) {
	e := newEnv(t, &scripted{})
	for i, text := range []string{
		"Olá, a minha máquina de café SN-48213-PL não aquece. Por favor reparem.",
		"Hola, mi cafetera SN-48213-PL ya no calienta. Por favor, repárenla.",
	} {
		mixed := e.run(t, convEmail("ana@example.pt", "Reklamacja 15", fmt.Sprintf("<p%d@example.pt>", i), text))
		if mixed.Language != "pl" && mixed.Language != "es" {
			t.Errorf("Polish subject over %q: language %s, want the default pl (or es)", text, mixed.Language)
		}
	}
	short := e.run(t, convEmail("hans@example.de", "Meine Kaffeemaschine heizt das Wasser nicht mehr", "<d1@example.de>", "SN-48213-PL"))
	if short.Language != "de" {
		t.Errorf("German subject, a serial as the text: language %s, want de", short.Language)
	}
}
