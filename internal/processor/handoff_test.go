package processor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/agent"
	"triage/internal/clients/tickets"
	"triage/internal/message"
	"triage/internal/processor"
	"triage/internal/testkit/geminitest"
)

// mailed is every message of the env's outbox, by its bare recipient:
// subjects, for the comparisons of the hand-off tests.
func (e *env) mailed(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	files, _ := filepath.Glob(filepath.Join(e.outbox, "*.eml"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := message.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		out[m.To[0]] = append(out[m.To[0]], m.Subject)
	}
	return out
}

const angry = "Dzień dobry, żądam rozmowy z kierownikiem w sprawie ekspresu SN-48213-PL."

// What became of a hand-off is recorded once it is known: the notice went
// first and could only say what triage was about to do. When the reply
// went out, the ticket says where and that the conversation is taken over.
func TestHandoffNoteSaysWhatHappened(t *testing.T) {
	e := newEnvStaff(t, &scripted{}, []string{boss})
	out := e.run(t, convEmail(anna, "Skandal", "<angry-1@example.pl>", angry))
	want := conv{Status: "replied", Scenario: "escalation", TicketID: "TKT-000001", Escalated: true, Calls: []string{"notify_staff ok", "send_email ok"}}
	if diff := cmp.Diff(want, convOf(out)); diff != "" {
		t.Fatalf("(-want +got):\n%s\n%s", diff, out.Detail)
	}
	got := triageNotes(t, e, "TKT-000001")
	if len(got) != 1 {
		t.Fatalf("triage's notes = %q, want one", got)
	}
	for _, s := range []string{"Staff (boss@example.com) were sent a notice", "triage's reply went to anna@example.pl (" + out.Reply.MessageID + ")", "taken over by staff"} {
		if !strings.Contains(got[0], s) {
			t.Errorf("the note lacks %q: %s", s, got[0])
		}
	}
	if diff := cmp.Diff(map[string][]string{boss: {`[triage escalation] [TKT-000001] Customer wrote: "Skandal"`}, "anna@example.pl": {"Re: Skandal [TKT-000001]"}}, e.mailed(t)); diff != "" {
		t.Errorf("mail (-want +got):\n%s", diff)
	}
}

// Attack: the notice said "taken over" and "our acknowledgement went
// there" even when the acknowledgement was refused. Now nothing is claimed
// ahead: the acknowledgement refused, staff get a short second notice
// saying the customer was not answered, the ticket says so, and the
// conversation is not taken over (triage claimed nothing it did not do).
func TestHandoffAcknowledgementRefused(t *testing.T) {
	// A model that mails the acknowledgement to staff: refused every time.
	e := newEnvStaff(t, &scripted{to: boss}, []string{boss})
	out := e.run(t, convEmail(anna, "Skandal", "<angry-2@example.pl>", angry))
	want := conv{Status: "failed", Reason: "email_not_sent", Scenario: "escalation", TicketID: "TKT-000001",
		Calls: []string{"notify_staff ok", "send_email blocked:recipient_not_allowed"}}
	if diff := cmp.Diff(want, convOf(out)); diff != "" {
		t.Fatalf("(-want +got):\n%s\n%s", diff, out.Detail)
	}
	if !strings.Contains(out.Detail, "staff were told that the customer was not answered") {
		t.Errorf("detail = %q", out.Detail)
	}
	wantMail := map[string][]string{boss: {
		`[triage escalation] [TKT-000001] Customer wrote: "Skandal"`,
		"[triage escalation] [TKT-000001] Not answered: triage's reply to the customer did not go out",
	}}
	got := e.mailed(t)
	for _, subjects := range got {
		slices.Sort(subjects)
	}
	if diff := cmp.Diff(wantMail, got); diff != "" {
		t.Errorf("mail (-want +got):\n%s", diff)
	}
	notes := triageNotes(t, e, "TKT-000001")
	if len(notes) != 1 || !strings.Contains(notes[0], "did not go out") || !strings.Contains(notes[0], "not taken over") ||
		!strings.Contains(notes[0], "second notice") || strings.Contains(notes[0], "went to") {
		t.Errorf("triage's notes = %q", notes)
	}
	st, err := e.tickets.Get(context.Background(), "TKT-000001")
	if err != nil {
		t.Fatal(err)
	}
	if st.AgentDisabled {
		t.Errorf("the conversation is taken over though nobody answered the customer (owner %q)", st.Owner)
	}
	// Processed again (a retry): the second notice is not sent twice.
	e.run(t, convEmail(anna, "Skandal", "<angry-2@example.pl>", angry))
	if n := len(e.mailed(t)[boss]); n != 2 {
		t.Errorf("after a retry staff have %d notices, want 2", n)
	}
}

// In draft mode the acknowledgement is a draft: the note says it has not
// gone out.
func TestHandoffNoteDraftMode(t *testing.T) {
	e := newEnvFull(t, &scripted{}, []string{boss}, nil, func(_ *agent.Config, c *processor.Config) { c.ReplyMode = "draft" })
	out := e.run(t, convEmail(anna, "Skandal", "<angry-3@example.pl>", angry))
	if out.Status != "drafted" || !out.Escalated {
		t.Fatalf("outcome %s escalated %v: %s", out.Status, out.Escalated, out.Detail)
	}
	notes := triageNotes(t, e, "TKT-000001")
	if len(notes) != 1 || !strings.Contains(notes[0], "left as a draft ("+out.Reply.MessageID+") for a person to send; it has not gone out") {
		t.Errorf("triage's notes = %q", notes)
	}
}

// followUpOf sets up Anna's ticket with our earlier reply, and returns her
// follow-up answering it: the follow-up scenario, whose reply promises the
// consultant.
func followUpOf(t *testing.T, e *env) []byte {
	t.Helper()
	ctx := context.Background()
	tk, err := e.tickets.Create(ctx, tickets.Request{IdempotencyKey: "k", SerialNumber: "SN-48213-PL", CustomerEmail: "anna@example.pl", Priority: "normal", MessageID: first})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.tickets.AddMessage(ctx, tk.TicketID, tickets.Message{MessageID: "<triage-r1@example.com>", Direction: tickets.Outbound, Subject: "Re: Reklamacja [TKT-000001]"}); err != nil {
		t.Fatal(err)
	}
	return convEmail(anna, "Re: Reklamacja [TKT-000001]", "<a2@example.pl>", "Ekspres teraz też przecieka.",
		"In-Reply-To: <triage-r1@example.com>", "References: "+first+" <triage-r1@example.com>")
}

// A reply that promises a person cannot go out before staff are told,
// whatever the model does: a model (the real genai SDK against a scripted
// server) that sends the follow-up's "the consultant will reply" at once
// is refused, and nothing reaches the customer; one that tells staff
// first gets through, and staff have the notice.
func TestPromiseOfAPersonWaitsForStaff(t *testing.T) {
	send := geminitest.Call("c-send", "send_email", map[string]any{"to": "anna@example.pl", "subject": "Re: Reklamacja",
		"body": "Dzień dobry,\n\ndopisaliśmy informację do zgłoszenia TKT-000001. Konsultant odpowie Państwu osobiście.\n"})
	t.Run("hostile: the promise first", func(t *testing.T) {
		f := geminitest.New(t, geminitest.One(send), geminitest.One(send), geminitest.One(geminitest.Text("Wysłane.")), geminitest.One(geminitest.Text("Wysłane.")))
		e := newEnv(t, &agent.Gemini{Client: f.Client()})
		out := e.run(t, followUpOf(t, e))
		want := conv{Status: "failed", Reason: "email_not_sent", Scenario: "follow-up", TicketID: "TKT-000001", Followup: true,
			Calls: []string{"send_email blocked:requirement_not_met", "send_email blocked:requirement_not_met"}}
		if diff := cmp.Diff(want, convOf(out)); diff != "" {
			t.Fatalf("(-want +got):\n%s\n%s", diff, out.Detail)
		}
		if got := e.mailed(t); len(got) != 0 {
			t.Errorf("mail went out: %v", got)
		}
	})
	t.Run("staff first", func(t *testing.T) {
		f := geminitest.New(t,
			geminitest.One(geminitest.Call("c-notify", "notify_staff", map[string]any{"subject": "Nowa informacja w TKT-000001", "body": "Klientka dopisała, że ekspres przecieka."})),
			geminitest.One(send))
		e := newEnv(t, &agent.Gemini{Client: f.Client()})
		out := e.run(t, followUpOf(t, e))
		want := conv{Status: "replied", Scenario: "follow-up", TicketID: "TKT-000001", Followup: true, Calls: followUpCalls}
		if diff := cmp.Diff(want, convOf(out)); diff != "" {
			t.Fatalf("(-want +got):\n%s\n%s", diff, out.Detail)
		}
		wantMail := map[string][]string{
			"kierownik@example.com": {`[triage hand-off] [TKT-000001] Customer wrote: "Re: Reklamacja"`},
			"anna@example.pl":       {"Re: Reklamacja [TKT-000001]"},
		}
		if diff := cmp.Diff(wantMail, e.mailed(t)); diff != "" {
			t.Errorf("mail (-want +got):\n%s", diff)
		}
		if f.Left() != 0 {
			t.Errorf("%d scripted answers unused", f.Left())
		}
	})
}

// triage process bounds staff notices in its outbox: one customer's flood
// of escalations reaches staff NoticesPerCustomer times an hour; the rest
// fails notice_limit, left for a person, with nothing sent to the customer
// (the acknowledgement waits for the notice). Another customer's still
// goes.
func TestProcessNoticeBound(t *testing.T) {
	e := newEnvStaff(t, &scripted{}, []string{boss})
	e.ob.SetNoticeLimits(triage.NoticeLimits{PerCustomer: 2, PerHour: 30})
	var got []string
	for i := range 3 {
		out := e.run(t, convEmail(anna, "Skandal", fmt.Sprintf("<flood-%d@example.pl>", i), angry))
		got = append(got, string(out.Status)+"/"+string(out.Reason))
	}
	out := e.run(t, convEmail("Ola <ola@example.pl>", "Skandal", "<ola-1@example.pl>", angry))
	got = append(got, string(out.Status)+"/"+string(out.Reason))
	if diff := cmp.Diff([]string{"replied/", "replied/", "failed/notice_limit", "replied/"}, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	mail := e.mailed(t)
	if len(mail[boss]) != 3 || len(mail["anna@example.pl"]) != 2 || len(mail["ola@example.pl"]) != 1 {
		t.Errorf("mail: %v", mail)
	}
}
