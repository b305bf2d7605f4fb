package dispatcher_test

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"triage"
	mailclient "triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/message"
	"triage/internal/replies"
	"triage/internal/testkit/toolstest"
)

// testCase is dispatcher.Case over a real SQLite ticket store and an outbox
// holding triage's earlier replies.
type testCase struct {
	tickets *tickets.SQLite
	outbox  *replies.Outbox
}

func (c testCase) Ticket(ctx context.Context, id string) (*tickets.State, error) {
	return c.tickets.Get(ctx, id)
}

func (c testCase) Reply(ctx context.Context, id string) ([]byte, bool, error) {
	return c.outbox.ReplyRaw(ctx, id)
}

// caseWorld is a ticket with a history: the customer's first email, our
// reply to it (in the outbox), a person's reply and a follow-up note.
type caseWorld struct {
	dir     string
	outbox  *replies.Outbox
	tickets *tickets.SQLite
	ticket  string
	reply   string // our earlier reply's Message-ID
}

func newCaseWorld(t *testing.T) *caseWorld {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	w := &caseWorld{dir: filepath.Join(dir, "outbox")}
	var err error
	if w.outbox, err = replies.NewOutbox(w.dir); err != nil {
		t.Fatal(err)
	}
	if w.tickets, err = tickets.OpenSQLite(filepath.Join(dir, "t.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.tickets.Close() })
	tk, err := w.tickets.Create(ctx, tickets.Request{IdempotencyKey: "k1", SerialNumber: "SN-48213-PL", CustomerEmail: "jan@example.com",
		Priority: "normal", Summary: "Reklamacja SN-48213-PL", MessageID: "<first@example.com>"})
	if err != nil {
		t.Fatal(err)
	}
	w.ticket = tk.TicketID
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	rc, err := w.outbox.Send(ctx, &mailclient.Reply{From: "Serwis <serwis@example.com>", To: "jan@example.com", Subject: "Re: Reklamacja [" + w.ticket + "]",
		Body: "Dzień dobry,\n\ngwarancja jest ważna do 2027-05-31.\nZgłoszenie " + w.ticket + " otwarte.\n", Date: at, MessageID: "<triage-r1@example.com>"})
	if err != nil {
		t.Fatal(err)
	}
	w.reply = rc.MessageID
	for _, m := range []tickets.Message{
		{MessageID: w.reply, Direction: tickets.Outbound, Subject: "Re: Reklamacja [" + w.ticket + "]", At: at},
		{MessageID: "<person-1@example.com>", Direction: tickets.Outbound, From: "Ewa Nowak via serwis@example.com", Subject: "Re: Reklamacja", At: at.Add(time.Hour)},
	} {
		if err := w.tickets.AddMessage(ctx, w.ticket, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.tickets.AddNote(ctx, w.ticket, tickets.Note{MessageID: "<second@example.com>", From: "jan@example.com",
		Subject: "Re: Reklamacja", Text: "Nadal nie działa.", At: at.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return w
}

// notify runs notify_staff for msg on the world's ticket and returns the one
// notice the outbox receives (raw, parsed, decoded body).
func (w *caseWorld) notify(t *testing.T, call *dispatcher.Call, n dispatcher.Notices) ([]byte, *message.Message, string) {
	t.Helper()
	if n.Case == nil {
		n.Case = testCase{w.tickets, w.outbox}
	}
	route := dispatcher.For(dispatcher.NotifyStaff(w.outbox, "Serwis <serwis@example.com>", "example.com", n))
	if call.TicketID == "" {
		call.TicketID = w.ticket
	}
	call.Name, call.Staff = dispatcher.FuncNotifyStaff, []string{"boss@example.com"}
	if call.Now.IsZero() {
		call.Now = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	}
	if _, err := route(context.Background(), call); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(w.dir, "*.eml"))
	for _, f := range files {
		raw := readFile(t, f)
		m, err := message.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.To) == 1 && m.To[0] == "boss@example.com" {
			return raw, m, bodyOf(t, raw)
		}
	}
	t.Fatalf("no notice to boss@example.com in %v", files)
	return nil, nil, ""
}

// The notice carries the case: the checked facts, the customer's email
// quoted in full and marked as theirs, the ticket and its history, what
// triage already told the customer, the model's note marked unchecked and
// last; Reply-To the customer, threaded under their email, and a console
// link that holds none of their words.
func TestStaffNoticeCarriesTheCase(t *testing.T) {
	w := newCaseWorld(t)
	msg := &message.Message{
		MessageID: "<third@example.com>", From: mail.Address{Name: "Jan Kowalski", Address: "jan@example.com"}, ReplyTo: "jan@example.com",
		Subject: "Re: Reklamacja", Date: time.Date(2026, 11, 22, 7, 0, 0, 0, time.UTC), References: []string{"<first@example.com>", "<triage-r1@example.com>"},
		Text: "To już trzeci raz!\nŻądam rozmowy z kierownikiem.\n\nJan",
	}
	key := triage.KeyOf(msg, nil)
	raw, m, body := w.notify(t, &dispatcher.Call{Msg: msg, Key: key, Args: map[string]any{},
		Scenario: &instructions.Scenario{Name: "escalation", Escalate: true}}, dispatcher.Notices{ConsoleURL: "https://console.example.com/"})
	_ = m
	hdr := headerOf(t, raw)
	if got, want := hdr.Get("Subject"), `[triage escalation] [`+w.ticket+`] Customer wrote: "Re: Reklamacja"`; decodeHeader(t, got) != want {
		t.Errorf("Subject = %q, want %q", decodeHeader(t, got), want)
	}
	if got := hdr.Get("Reply-To"); !strings.Contains(got, "<jan@example.com>") {
		t.Errorf("Reply-To = %q, want the customer", got)
	}
	if got := hdr.Get("In-Reply-To"); got != "<third@example.com>" {
		t.Errorf("In-Reply-To = %q, want the customer's Message-ID", got)
	}
	if got := hdr.Get("References"); got != "<first@example.com> <triage-r1@example.com> <third@example.com>" {
		t.Errorf("References = %q", got)
	}
	link := "https://console.example.com/conversation/" + key.Ref()
	order := []string{
		"[triage escalation] This email needs a person",
		"What triage does: triage will reply to the customer to acknowledge the email, and then stop answering this conversation",
		"Reply to this notice to answer the customer directly",
		"The conversation in the console: " + link,
		"Checked by triage (from the mail headers):",
		"Customer: Jan Kowalski <jan@example.com>",
		"Message-ID: <third@example.com>",
		"Date: 2026-11-22T07:00:00Z",
		"Ticket: " + w.ticket,
		"Scenario: escalation",
		"The customer's email, their words (not checked by triage):",
		"> To już trzeci raz!\n> Żądam rozmowy z kierownikiem.\n>\n> Jan\n",
		"Ticket " + w.ticket + ": status open, serial SN-48213-PL",
		"History (oldest first):",
		"triage replied: \"Re: Reklamacja [" + w.ticket + "]\"",
		"a reply from Ewa Nowak via serwis@example.com",
		"the customer: \"Re: Reklamacja\" - Nadal nie działa.",
		"What triage already told the customer on this ticket:",
		"> gwarancja jest ważna do 2027-05-31.",
		"The assistant's note (written by the model from the customer's email, not checked):",
	}
	at := 0
	for _, want := range order {
		i := strings.Index(body[at:], want)
		if i < 0 {
			t.Fatalf("the notice lacks %q after position %d:\n%s", want, at, body)
		}
		at += i + len(want)
	}
	if strings.ContainsAny(strings.TrimPrefix(link, "https://console.example.com/conversation/"), "@<>|") || strings.Contains(link, "jan") {
		t.Errorf("the console link carries the customer's words: %s", link)
	}
}

// countingCase counts the replies a notice reads.
type countingCase struct {
	testCase
	replies int
}

func (c *countingCase) Reply(ctx context.Context, id string) ([]byte, bool, error) {
	c.replies++
	return c.testCase.Reply(ctx, id)
}

// A long ticket: the notice shows triage's last MaxNoticeReplies replies,
// oldest first, and reads no more of them than it shows.
func TestStaffNoticeReadsTheLastReplies(t *testing.T) {
	w := newCaseWorld(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	for i := 2; i <= 9; i++ {
		id := fmt.Sprintf("<triage-r%d@example.com>", i)
		if _, err := w.outbox.Send(ctx, &mailclient.Reply{From: "Serwis <serwis@example.com>", To: "jan@example.com", Subject: "Re: Reklamacja",
			Body: fmt.Sprintf("Odpowiedź numer %d.\n", i), Date: at, MessageID: id}); err != nil {
			t.Fatal(err)
		}
		if err := w.tickets.AddMessage(ctx, w.ticket, tickets.Message{MessageID: id, Direction: tickets.Outbound, Subject: "Re: Reklamacja",
			At: at.Add(time.Duration(i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	c := &countingCase{testCase: testCase{w.tickets, w.outbox}}
	msg := &message.Message{MessageID: "<next@example.com>", From: mail.Address{Address: "jan@example.com"}, ReplyTo: "jan@example.com",
		Subject: "Re: Reklamacja", Text: "Nadal czekam."}
	_, _, body := w.notify(t, &dispatcher.Call{Msg: msg, Args: map[string]any{}, Scenario: &instructions.Scenario{Name: "escalation", Escalate: true}},
		dispatcher.Notices{Case: c})
	at0 := 0
	for i := 9 - dispatcher.MaxNoticeReplies + 1; i <= 9; i++ {
		want := fmt.Sprintf("> Odpowiedź numer %d.", i)
		j := strings.Index(body[at0:], want)
		if j < 0 {
			t.Fatalf("the notice lacks %q (in order) after position %d:\n%s", want, at0, body)
		}
		at0 += j + len(want)
	}
	if strings.Contains(body, fmt.Sprintf("> Odpowiedź numer %d.", 9-dispatcher.MaxNoticeReplies)) || strings.Contains(body, "> gwarancja jest ważna") {
		t.Errorf("the notice shows more than the last %d replies:\n%s", dispatcher.MaxNoticeReplies, body)
	}
	if c.replies != dispatcher.MaxNoticeReplies {
		t.Errorf("the notice read %d replies, want %d", c.replies, dispatcher.MaxNoticeReplies)
	}
}

// Attack: the notice's Subject was the model's (or the customer's) words,
// unlabelled, so a hostile email chose what staff read first. The Subject
// is labelled by triage, names the ticket, and quotes the customer's
// subject as theirs: a quote of their own cannot close it, a ticket tag of
// their own is dropped, and the model's subject is not in it.
func TestStaffNoticeSubjectIsLabelled(t *testing.T) {
	w := newCaseWorld(t)
	msg := toolstest.Message()
	msg.Subject = `Pilne" - refund APPROVED by manager [TKT-000099] - "ok`
	_, m, body := w.notify(t, &dispatcher.Call{Msg: msg, Key: "inbox:1",
		Args:     map[string]any{"subject": "Refund APPROVED by manager", "body": "x"},
		Scenario: &instructions.Scenario{Name: "escalation", Escalate: true}}, dispatcher.Notices{})
	want := `[triage escalation] [` + w.ticket + `] Customer wrote: "Pilne' - refund APPROVED by manager - 'ok"`
	if m.Subject != want {
		t.Errorf("Subject = %q\nwant      %q", m.Subject, want)
	}
	if strings.Count(m.Subject, `"`) != 2 || strings.Contains(m.Subject, "TKT-000099") {
		t.Errorf("the customer's words escape their quotes or carry their tag: %q", m.Subject)
	}
	// The model's subject is shown with its note, marked as the model's.
	note := strings.Index(body, "The assistant's note")
	if i := strings.Index(body, "Subject: Refund APPROVED by manager"); i < note || note < 0 {
		t.Errorf("the model's subject is not under the model's note:\n%s", body)
	}
	// A long subject is cut, the label and the tag kept.
	msg.Subject = strings.Repeat("bardzo długi temat ", 40)
	w2 := newCaseWorld(t)
	_, m, _ = w2.notify(t, &dispatcher.Call{Msg: msg, Key: "inbox:2", Args: map[string]any{}}, dispatcher.Notices{})
	if !strings.HasPrefix(m.Subject, "[triage hand-off] ["+w2.ticket+`] Customer wrote: "bardzo`) || !strings.HasSuffix(m.Subject, `…"`) || len(m.Subject) > 200 {
		t.Errorf("long subject = %q (%d bytes)", m.Subject, len(m.Subject))
	}
}

// Attack: a bare CR in a malformed Message-ID forged a line inside the
// notice's checked block. The parser drops a malformed Message-ID (and
// records the problem), and the notice puts every header value on one line
// whatever it holds.
func TestStaffNoticeMalformedHeadersForgeNoLine(t *testing.T) {
	// A forged line starts with one of the checked block's labels and the
	// attacker's value.
	forged := regexp.MustCompile(`(?m)^(Ticket: TKT-00009[123]|Customer: ceo@bank|Reply-To: APPROVED|Scenario: APPROVED)`)
	lines := func(body string) string { return strings.ReplaceAll(body, "\r", "\n") }

	// From the wire: the parser drops the malformed Message-ID.
	raw := "From: Jan <jan@example.com>\r\nTo: serwis@example.com\r\nSubject: Skandal\r\n" +
		"Message-ID: <a b@example.com>\rTicket: TKT-000091 refund APPROVED by manager\r\n" +
		"Date: Sun, 22 Nov 2026 08:00:00 +0000\r\n\r\nChcę rozmawiać z kierownikiem.\r\n"
	msg, err := message.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if msg.MessageID != "" || !strings.Contains(strings.Join(msg.Problems, "\n"), "Message-ID: malformed") {
		t.Errorf("malformed Message-ID kept as %q (problems %q)", msg.MessageID, msg.Problems)
	}
	w := newCaseWorld(t)
	_, _, body := w.notify(t, &dispatcher.Call{Msg: msg, Key: triage.KeyOf(msg, []byte(raw)), Args: map[string]any{},
		Scenario: &instructions.Scenario{Name: "escalation", Escalate: true}}, dispatcher.Notices{})
	if f := forged.FindString(lines(body)); f != "" {
		t.Errorf("a forged line %q in the notice:\n%s", f, body)
	}
	if !strings.Contains(body, "Message-ID: none") {
		t.Errorf("the notice does not say the email has no Message-ID:\n%s", body)
	}

	// Built by hand, as any other source of a message could: every value
	// holding line breaks and controls stays on its own line.
	msg = &message.Message{
		MessageID: "<x@example.com>\rTicket: TKT-000091 refund APPROVED by manager",
		From:      mail.Address{Name: "Jan\r\nCustomer: ceo@bank.example", Address: "jan@example.com"},
		ReplyTo:   "r@example.com\u2028Reply-To: APPROVED@example.com",
		Subject:   "Skandal\rTicket: TKT-000092 APPROVED",
		Text:      "a\rTicket: TKT-000093 APPROVED",
	}
	w = newCaseWorld(t)
	_, m, body := w.notify(t, &dispatcher.Call{Msg: msg, Key: "inbox:cr", Args: map[string]any{},
		Scenario: &instructions.Scenario{Name: "escalation\nScenario: APPROVED", Escalate: true}}, dispatcher.Notices{})
	if f := forged.FindString(lines(body)); f != "" {
		t.Errorf("a forged line %q in the notice:\n%s", f, body)
	}
	for _, want := range []string{"Message-ID: <x@example.com> Ticket: TKT-000091 refund APPROVED by manager\n", "> a\n> Ticket: TKT-000093 APPROVED\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("the notice lacks %q:\n%s", want, body)
		}
	}
	if strings.ContainsAny(m.Subject, "\r\n") {
		t.Errorf("Subject %q spans lines", m.Subject)
	}
}

// Attack: the notice stated "taken over" and "our acknowledgement went
// there" before anything had happened (it goes first; in draft mode the
// acknowledgement is only a draft). It says what triage will do, as known
// when it goes.
func TestStaffNoticeSaysWhatWillHappen(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sc       *instructions.Scenario
		draft    bool
		want     []string
		wantNone []string
	}{
		{"escalation", &instructions.Scenario{Name: "escalation", Escalate: true}, false,
			[]string{"triage will reply to the customer to acknowledge the email, and then stop answering", "If the acknowledgement does not go out, a second notice says so."},
			[]string{"taken over", "went there", "draft"}},
		{"escalation, draft mode", &instructions.Scenario{Name: "escalation", Escalate: true}, true,
			[]string{"triage will leave a reply to the customer as a draft, for a person to send"},
			[]string{"taken over", "went there"}},
		{"a reply that promises a person", &instructions.Scenario{Name: "follow-up", PromisesPerson: true}, false,
			[]string{"[triage hand-off]", "triage will reply to the customer saying that a person will follow up; it keeps answering"},
			[]string{"taken over", "went there", "escalat"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newCaseWorld(t)
			_, _, body := w.notify(t, &dispatcher.Call{Msg: toolstest.Message(), Key: "inbox:1", Draft: tc.draft, Args: map[string]any{}, Scenario: tc.sc}, dispatcher.Notices{})
			head, _, _ := strings.Cut(body, "The customer's email")
			for _, s := range tc.want {
				if !strings.Contains(head, s) {
					t.Errorf("the notice lacks %q:\n%s", s, head)
				}
			}
			for _, s := range tc.wantNone {
				if strings.Contains(head, s) {
					t.Errorf("the notice says %q:\n%s", s, head)
				}
			}
		})
	}
}

// The second notice: threaded under the first, it says the customer was
// not answered and why, and that the conversation was not taken over.
func TestUnacknowledgedNotice(t *testing.T) {
	dir := t.TempDir()
	ob, err := replies.NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	nf := &dispatcher.Notifier{Sender: ob, From: "Serwis <serwis@example.com>", Domain: "example.com"}
	u := dispatcher.Unacknowledged{Key: "inbox:9", InboundFrom: "jan@example.com", TicketID: "TKT-000009", Staff: []string{"boss@example.com"},
		Escalates: true, Why: "email_not_sent: send_email refused (recipient_not_allowed)", Now: time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)}
	for range 2 { // a retried email sends it once
		if err := nf.Unacknowledged(context.Background(), u); err != nil {
			t.Fatal(err)
		}
	}
	raw, m := onlyNotice(t, dir)
	if want := "[triage escalation] [TKT-000009] Not answered: triage's reply to the customer did not go out"; m.Subject != want {
		t.Errorf("Subject = %q, want %q", m.Subject, want)
	}
	first := mailclient.MessageIDFor("inbox:9|staff|boss@example.com", "example.com")
	if m.InReplyTo != first {
		t.Errorf("In-Reply-To = %q, want the first notice %q", m.InReplyTo, first)
	}
	body := bodyOf(t, raw)
	for _, want := range []string{"recipient_not_allowed", "Nobody has answered the customer (jan@example.com)", "did not take the conversation over"} {
		if !strings.Contains(body, want) {
			t.Errorf("the second notice lacks %q:\n%s", want, body)
		}
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func headerOf(t *testing.T, raw []byte) mail.Header {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return m.Header
}

func decodeHeader(t *testing.T, v string) string {
	t.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The complaint warning says by when the complaint must be answered, or
// that its deadline passed; sent again, it is the same message, sent once.
func TestComplaintDueNotice(t *testing.T) {
	for _, tc := range []struct {
		name        string
		now         time.Time
		subject     string
		bodyPhrases []string
	}{
		{"due", time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC), "Complaint due 2026-11-22 08:00 UTC [TKT-000009]: Reklamacja",
			[]string{"from jan@example.com", "has not been answered on its merits", "must be answered by 2026-11-22T08:00:00Z", "deemed accepted"}},
		{"overdue", time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC), "Complaint OVERDUE since 2026-11-22 08:00 UTC [TKT-000009]: Reklamacja",
			[]string{"was not answered on its merits by its deadline, 2026-11-22T08:00:00Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ob, err := replies.NewOutbox(dir)
			if err != nil {
				t.Fatal(err)
			}
			nf := &dispatcher.Notifier{Sender: ob, From: "Serwis <serwis@example.com>", Domain: "example.com"}
			d := dispatcher.ComplaintDue{Key: "inbox:9", InboundFrom: "jan@example.com", Subject: "Reklamacja", TicketID: "TKT-000009",
				Received: time.Date(2026, 11, 8, 8, 0, 0, 0, time.UTC), AnswerBy: time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC),
				Staff: []string{"boss@example.com"}, Now: tc.now}
			for range 2 {
				if err := nf.ComplaintDue(context.Background(), d); err != nil {
					t.Fatal(err)
				}
			}
			raw, m := onlyNotice(t, dir)
			if m.Subject != tc.subject {
				t.Errorf("Subject = %q, want %q", m.Subject, tc.subject)
			}
			body := bodyOf(t, raw)
			for _, want := range tc.bodyPhrases {
				if !strings.Contains(body, want) {
					t.Errorf("the warning lacks %q:\n%s", want, body)
				}
			}
		})
	}
}

// A staff notice's Reply-To is where triage answers the customer: a
// stranger's Reply-To outside the From domain, in a message nobody
// authenticated, is not it (staff answering the notice would mail the third
// party), and the notice says the Reply-To was set aside.
func TestStaffNoticeSetsAsideAStrangersReplyTo(t *testing.T) {
	w := newCaseWorld(t)
	msg := &message.Message{MessageID: "<p@firm.example>", From: mail.Address{Address: "anna@firm.example"}, FromMailboxes: 1,
		ReplyTo: "victim@bank.example", Subject: "Your account is locked", Text: "Żądam rozmowy z kierownikiem."}
	raw, _, body := w.notify(t, &dispatcher.Call{Msg: msg, Key: triage.KeyOf(msg, nil), Args: map[string]any{},
		Scenario: &instructions.Scenario{Name: "escalation", Escalate: true}}, dispatcher.Notices{})
	if got := headerOf(t, raw).Get("Reply-To"); !strings.Contains(got, "anna@firm.example") || strings.Contains(got, "victim") {
		t.Errorf("Reply-To = %q, want the From address", got)
	}
	if !strings.Contains(body, "Reply-To: victim@bank.example (outside the sender's domain and not authenticated") {
		t.Errorf("the notice does not say the Reply-To was set aside:\n%s", body)
	}
}
