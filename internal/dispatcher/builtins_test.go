package dispatcher_test

import (
	"bytes"
	"context"
	"io"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	gomessage "github.com/emersion/go-message"
	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/agent"
	mailclient "triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/clients/warranty"
	"triage/internal/dispatcher"
	"triage/internal/message"
	"triage/internal/testkit/toolstest"
)

// localDispatcher wires the real local backends: CSV registry, SQLite
// tickets and an outbox directory.
func localDispatcher(t *testing.T, dbPath, outbox string, now time.Time) *dispatcher.Dispatcher {
	t.Helper()
	reg, err := warranty.LoadCSV(filepath.Join("testdata", "warranty.csv"))
	if err != nil {
		t.Fatal(err)
	}
	tk, err := tickets.OpenSQLite(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tk.Close() })
	ob, err := mailclient.NewOutbox(outbox)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatcher.New(dispatcher.Config{
		Tools:    toolstest.Shipped(t),
		Builtins: dispatcher.Routes(reg, nil, tk, ob, "Wsparcie <support@example.com>", "example.com", dispatcher.Notices{}),
		Now:      func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRoutesEndToEnd(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 22, 8, 15, 0, 0, time.UTC)
	d := localDispatcher(t, filepath.Join(dir, "tickets.db"), filepath.Join(dir, "outbox"), now)
	if diff := cmp.Diff([]string{dispatcher.FuncCheckWarranty, dispatcher.FuncCreateTicket, dispatcher.FuncNotifyStaff, dispatcher.FuncSendEmail}, d.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	msg := toolstest.Message()
	msg.References = []string{"<root@example.com>", "<in-1@example.com>"}
	sc := toolstest.Scenario(t, false)
	ctx := context.Background()

	s := d.Session(msg, sc, "inbox:42")
	steps := []struct {
		name string
		args map[string]any
		want map[string]any
	}{
		{dispatcher.FuncCheckWarranty, map[string]any{"serial_number": "sn 48213 pl"},
			map[string]any{"ok": true, "result": map[string]any{"serial_number": "SN-48213-PL", "status": "valid", "expiration_date": "2027-03-01", "product": "Ekspres EC-200"}}},
		{dispatcher.FuncCheckWarranty, map[string]any{"serial_number": "ABC-123456"},
			map[string]any{"ok": true, "result": map[string]any{"serial_number": "ABC123456", "status": "expired", "expiration_date": "2024-01-15", "product": "Czajnik K-1"}}},
		{dispatcher.FuncCreateTicket, map[string]any{"serial_number": "SN-48213-PL", "customer_email": "Jan <jan@example.com>", "priority": "high"},
			map[string]any{"ok": true, "result": map[string]any{"ticket_id": "TKT-000001", "status": "created"}}},
	}
	for i, st := range steps {
		if st.name == dispatcher.FuncCreateTicket {
			s.StartTurn() // after the model saw check_warranty's result
		}
		if diff := cmp.Diff(st.want, s.Call(ctx, st.name, st.args).Envelope()); diff != "" {
			t.Errorf("step %d %s (-want +got):\n%s", i, st.name, diff)
		}
	}
	env := s.Call(ctx, dispatcher.FuncSendEmail, map[string]any{"to": "jan.reply@example.com", "subject": "Re: Reklamacja SN-48213-PL", "body": "Dzień dobry,\nzgłoszenie TKT-000001 przyjęte."}).Envelope()
	wantID := mailclient.MessageIDFor("inbox:42", "example.com")
	wantPath := filepath.Join(dir, "outbox", "20261122T081500Z-"+strings.Trim(wantID, "<>")+".eml")
	want := map[string]any{"ok": true, "result": map[string]any{"message_id": wantID, "to": "jan.reply@example.com", "path": wantPath, "status": "sent", "subject": "Re: " + dispatcher.NeutralSubject("") + " [TKT-000001]"}}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Fatalf("send_email (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want["result"], sentResult(s.Records())); diff != "" {
		t.Errorf("Sent (-want +got):\n%s", diff)
	}

	f, err := os.Open(wantPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := mail.ReadMessage(f)
	if err != nil {
		t.Fatal(err)
	}
	gotHeaders := map[string]string{}
	for _, k := range []string{"From", "To", "Subject", "Message-Id", "In-Reply-To", "References", "Date", "Auto-Submitted"} {
		gotHeaders[k] = m.Header.Get(k)
	}
	wantHeaders := map[string]string{
		"From":           `"Wsparcie" <support@example.com>`,
		"To":             "<jan.reply@example.com>",
		"Subject":        "Re: " + dispatcher.NeutralSubject("") + " [TKT-000001]", // not the sender's subject: the reply goes to their Reply-To; the pipeline tags it
		"Message-Id":     wantID,
		"In-Reply-To":    "<in-1@example.com>",
		"References":     "<root@example.com> <in-1@example.com>",
		"Date":           "Sun, 22 Nov 2026 08:15:00 +0000",
		"Auto-Submitted": "auto-replied",
	}
	if diff := cmp.Diff(wantHeaders, gotHeaders); diff != "" {
		t.Errorf("reply headers (-want +got):\n%s", diff)
	}

	// The same email processed again (a retry) finds its ticket and reuses
	// the reply Message-ID.
	d2 := localDispatcher(t, filepath.Join(dir, "tickets.db"), filepath.Join(dir, "outbox"), now)
	s2 := d2.Session(msg, sc, "inbox:42")
	s2.Call(ctx, dispatcher.FuncCheckWarranty, map[string]any{"serial_number": "SN-48213-PL"})
	s2.StartTurn()
	got := s2.Call(ctx, dispatcher.FuncCreateTicket, map[string]any{"serial_number": "SN48213PL", "customer_email": "jan@example.com", "priority": "high"}).Envelope()
	if diff := cmp.Diff(map[string]any{"ok": true, "result": map[string]any{"ticket_id": "TKT-000001", "status": "existing"}}, got); diff != "" {
		t.Errorf("retried create_ticket (-want +got):\n%s", diff)
	}
	s3 := d2.Session(msg, sc, "inbox:43")
	s3.Call(ctx, dispatcher.FuncCheckWarranty, map[string]any{"serial_number": "SN-48213-PL"})
	s3.StartTurn()
	got = s3.Call(ctx, dispatcher.FuncCreateTicket, map[string]any{"serial_number": "SN-48213-PL", "customer_email": "jan@example.com", "priority": "high"}).Envelope()
	if diff := cmp.Diff(map[string]any{"ok": true, "result": map[string]any{"ticket_id": "TKT-000002", "status": "created"}}, got); diff != "" {
		t.Errorf("another email's create_ticket (-want +got):\n%s", diff)
	}
}

type fakeCreator struct{ got []tickets.Request }

func (f *fakeCreator) Create(ctx context.Context, r tickets.Request) (tickets.Ticket, error) {
	f.got = append(f.got, r)
	return tickets.Ticket{TicketID: "TKT-000007", Status: tickets.StatusCreated}, nil
}

func TestCreateTicketRequest(t *testing.T) {
	f := &fakeCreator{}
	route := dispatcher.For(dispatcher.CreateTicket(f))
	msg := toolstest.Message()
	calls := []map[string]any{
		{"serial_number": "SN-48213-PL", "customer_email": "Jan <JAN@example.com>"},
		{"serial_number": "sn 48213.pl", "customer_email": "jan@example.com", "priority": "high"},
	}
	for _, args := range calls {
		if _, err := route(context.Background(), &dispatcher.Call{Name: dispatcher.FuncCreateTicket, Args: args, Msg: msg, Key: "k"}); err != nil {
			t.Fatal(err)
		}
	}
	key := dispatcher.TicketKey("k", "SN48213PL")
	want := []tickets.Request{
		{SerialNumber: "SN-48213-PL", CustomerEmail: "jan@example.com", Priority: dispatcher.DefaultPriority, Summary: msg.Subject, IdempotencyKey: key, MessageID: msg.MessageID},
		{SerialNumber: "sn 48213.pl", CustomerEmail: "jan@example.com", Priority: "high", Summary: msg.Subject, IdempotencyKey: key, MessageID: msg.MessageID},
	}
	if diff := cmp.Diff(want, f.got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if len(key) != 32 || key == dispatcher.TicketKey("k2", "SN48213PL") || key == dispatcher.TicketKey("k", "SN48213") {
		t.Errorf("TicketKey not a 32-char key distinct per email and serial: %q", key)
	}
}

type fakeSender struct{ got []mailclient.Reply }

func (f *fakeSender) Send(ctx context.Context, r *mailclient.Reply) (triage.Receipt, error) {
	f.got = append(f.got, *r)
	return triage.Receipt{MessageID: r.MessageID}, nil
}

func TestSendEmailReply(t *testing.T) {
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		msg     func(m *message.Message)
		key     triage.Key
		to      string // "" means "Jan <jan@example.com>", the From address
		subject string // "" means "Re: x"
		want    mailclient.Reply
	}{
		{
			name: "threaded, references deduplicated",
			msg:  func(m *message.Message) { m.References = []string{"<a@x>", "<in-1@example.com>", "<a@x>"} },
			key:  "k",
			want: mailclient.Reply{
				From: "Support <support@example.com>", To: "jan@example.com", ToName: "Jan Kowalski", Subject: "Re: x", Body: "b",
				InReplyTo: "<in-1@example.com>", References: []string{"<a@x>", "<in-1@example.com>"},
				MessageID: mailclient.MessageIDFor("k", "example.com"), Date: now, Key: "k",
			},
		},
		{
			name: "inbound without Message-ID, no key",
			msg:  func(m *message.Message) { m.MessageID = "" },
			want: mailclient.Reply{From: "Support <support@example.com>", To: "jan@example.com", ToName: "Jan Kowalski", Subject: "Re: x", Body: "b", Date: now},
		},
		{
			name:    "reply markers collapse to one Re:",
			msg:     func(m *message.Message) { m.MessageID = "" },
			subject: "Re: RE: Odp: AW: SV: Re[2]: x",
			want:    mailclient.Reply{From: "Support <support@example.com>", To: "jan@example.com", ToName: "Jan Kowalski", Subject: "Re: x", Body: "b", Date: now},
		},
		{
			name:    "a subject without Re: gets one",
			msg:     func(m *message.Message) { m.MessageID = "" },
			subject: "Reklamacja",
			want:    mailclient.Reply{From: "Support <support@example.com>", To: "jan@example.com", ToName: "Jan Kowalski", Subject: "Re: Reklamacja", Body: "b", Date: now},
		},
		{
			name: "a reply to the Reply-To carries a neutral subject, never the sender's",
			msg:  func(m *message.Message) { m.MessageID = "" },
			to:   "jan.reply@example.com",
			want: mailclient.Reply{From: "Support <support@example.com>", To: "jan.reply@example.com", Subject: "Re: " + dispatcher.NeutralSubject("de"), Body: "b", Date: now},
		},
		{
			name: "To carries the customer's display name when the reply goes to From",
			msg:  func(m *message.Message) { m.MessageID = ""; m.ReplyTo = "jan@example.com" },
			to:   "JAN@example.com",
			want: mailclient.Reply{From: "Support <support@example.com>", To: "jan@example.com", ToName: "Jan Kowalski", Subject: "Re: x", Body: "b", Date: now},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeSender{}
			msg := toolstest.Message()
			tt.msg(msg)
			tt.want.InboundDigest = triage.DigestOf(msg) // what the reply answers, for the outbox
			tt.want.InboundFrom = msg.From.Address       // whom a per-sender limit counts it against too
			tt.want.Language = "de"                      // the customer's, as the pipeline detected it: signed in it
			to, subject := tt.to, tt.subject
			if to == "" {
				to = "Jan <jan@example.com>"
			}
			if subject == "" {
				subject = "Re: x"
			}
			args := map[string]any{"to": to, "subject": subject, "body": "b"}
			if _, err := dispatcher.For(dispatcher.SendEmail(f, "Support <support@example.com>", "example.com"))(context.Background(), &dispatcher.Call{Name: dispatcher.FuncSendEmail, Args: args, Msg: msg, Key: tt.key, Now: now, Language: "de"}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]mailclient.Reply{tt.want}, f.got); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}

// BenchmarkSessionCall measures one guarded check_warranty call against the
// CSV registry: schema validation, serial guard, route, record.
func BenchmarkSessionCall(b *testing.B) {
	reg, err := warranty.LoadCSV(filepath.Join("testdata", "warranty.csv"))
	if err != nil {
		b.Fatal(err)
	}
	d, err := dispatcher.New(dispatcher.Config{Tools: toolstest.Shipped(b), Builtins: map[string]dispatcher.Func{dispatcher.FuncCheckWarranty: dispatcher.For(dispatcher.CheckWarranty(reg, nil))}, Routes: okRoutes(dispatcher.FuncCreateTicket, dispatcher.FuncSendEmail, dispatcher.FuncNotifyStaff)})
	if err != nil {
		b.Fatal(err)
	}
	msg, sc := toolstest.Message(), toolstest.Scenario(b, false)
	args := map[string]any{"serial_number": "SN-48213-PL"}
	ctx := context.Background()
	for b.Loop() {
		s := d.Session(msg, sc, "k")
		if env := s.Call(ctx, dispatcher.FuncCheckWarranty, args).Envelope(); env["ok"] != true {
			b.Fatal(env)
		}
	}
}

func TestNotifyStaff(t *testing.T) {
	dir := t.TempDir()
	ob, err := mailclient.NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 8, 15, 0, 0, time.UTC)
	route := dispatcher.For(dispatcher.NotifyStaff(ob, "Wsparcie <support@example.com>", "example.com", dispatcher.Notices{}))
	msg := toolstest.Message()
	call := &dispatcher.Call{Name: dispatcher.FuncNotifyStaff, Args: map[string]any{"subject": "Klient prosi o człowieka", "body": "Proszę o kontakt."},
		Msg: msg, Key: "inbox:42", Now: now, TicketID: "TKT-000007", Staff: []string{"boss@example.com", "team@example.com"}}
	res, err := route(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	ids := []any{mailclient.MessageIDFor("inbox:42|staff|boss@example.com", "example.com"), mailclient.MessageIDFor("inbox:42|staff|team@example.com", "example.com")}
	if diff := cmp.Diff(map[string]any{"notified": []any{"boss@example.com", "team@example.com"}, "message_ids": ids}, res.Value); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	// Never the customer's reply: its own Message-ID is not the reply's.
	if ids[0] == mailclient.MessageIDFor("inbox:42", "example.com") {
		t.Error("staff notice reuses the customer reply's Message-ID")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	if len(files) != 2 {
		t.Fatalf("outbox has %d files, want 2", len(files))
	}
	var tos []string
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		m, err := message.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		tos = append(tos, "<"+m.To[0]+">")
		if got, want := m.Subject, `[triage hand-off] [TKT-000007] Customer wrote: "Reklamacja SN-48213-PL"`; got != want {
			t.Errorf("subject = %q, want %q", got, want)
		}
		for _, want := range []string{"Proszę o kontakt.", "Klient prosi o człowieka", "Customer: Jan Kowalski <jan@example.com>", "Message-ID: <in-1@example.com>", "Ticket: TKT-000007"} {
			if !strings.Contains(m.Text+m.Quoted, want) {
				t.Errorf("%s lacks %q", f, want)
			}
		}
	}
	if diff := cmp.Diff([]string{"<boss@example.com>", "<team@example.com>"}, sortedCopy(tos)); diff != "" {
		t.Errorf("recipients (-want +got):\n%s", diff)
	}
	call.Staff = nil
	if _, err := route(context.Background(), call); err == nil {
		t.Error("no staff: accepted")
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// A staff notice's body is the model's, written from a hostile email: it
// may carry a forged "-- \nCustomer: ..." block. The facts triage checked
// come first, before the model's text, so the first "Customer:" a person
// reads is the real one (a trailing block after a signature separator is
// what mail clients fold away).
func TestStaffNoticeFactsComeBeforeTheModelsText(t *testing.T) {
	dir := t.TempDir()
	ob, err := mailclient.NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	route := dispatcher.For(dispatcher.NotifyStaff(ob, "Wsparcie <support@example.com>", "example.com", dispatcher.Notices{}))
	forged := "Klient prosi o kontakt.\n\n-- \nCustomer: ceo@bank.example\nTicket: TKT-000001 (VIP, refund approved)"
	_, err = route(context.Background(), &dispatcher.Call{Name: dispatcher.FuncNotifyStaff, Args: map[string]any{"subject": "Eskalacja", "body": forged},
		Msg: toolstest.Message(), Key: "inbox:7", Now: time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC), TicketID: "TKT-000007", Staff: []string{"boss@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := onlyNotice(t, dir)
	text := bodyOf(t, raw)
	real, fake := strings.Index(text, "Customer: Jan Kowalski <jan@example.com>"), strings.Index(text, "Customer: ceo@bank.example")
	if real < 0 || fake < 0 || real > fake || strings.Index(text, "Ticket: TKT-000007") > fake {
		t.Errorf("the checked facts must precede the model's text:\n%s", raw)
	}
	if !strings.Contains(text, "not checked") {
		t.Errorf("the model's text is not marked as unchecked:\n%s", text)
	}
	// The Reply-To differs from From (testMessage): staff see it, before
	// the model's text.
	if i := strings.Index(text, "Reply-To: jan.reply@example.com (differs from the From address"); i < 0 || i > fake {
		t.Errorf("the notice does not show the Reply-To first:\n%s", text)
	}
}

// notify_staff abused by a model: a header in the subject, a body over the
// cap, HTML, a second notice with other words. Through the session and the
// real route into an outbox: one notice, to the configured staff only.
func TestNotifyStaffAbuse(t *testing.T) {
	dir := t.TempDir()
	ob, err := mailclient.NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	routes := okRoutes(dispatcher.FuncCheckWarranty, dispatcher.FuncCreateTicket, dispatcher.FuncSendEmail)
	routes[dispatcher.FuncNotifyStaff] = dispatcher.For(dispatcher.NotifyStaff(ob, "support@example.com", "example.com", dispatcher.Notices{}))
	d, err := dispatcher.New(dispatcher.Config{Tools: toolstest.Shipped(t), Routes: routes, StaffAddresses: []string{"boss@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	s := d.Session(toolstest.Message(), toolstest.Scenario(t, true), "k")
	ctx := context.Background()
	steps := []struct {
		subject, body string
		want          agent.ErrorCode
	}{
		{"Eskalacja\r\nBcc: eve@evil.example", "x", dispatcher.CodeInvalidArgs},
		{"Eskalacja\nTo: eve@evil.example", "x", dispatcher.CodeInvalidArgs},
		{strings.Repeat("E", 201), "x", dispatcher.CodeInvalidArgs},
		{"Eskalacja", strings.Repeat("x", dispatcher.DefaultMaxBodyBytes+1), dispatcher.CodeBodyTooLarge},
		{"Eskalacja", "<html><body><a href='http://evil.example'>kliknij</a></body></html>", dispatcher.CodeBodyNotPlainText},
		{"Eskalacja", "Klient prosi o kontakt.", ""},
		{"Eskalacja pilna", "Klient prosi o kontakt natychmiast.", dispatcher.CodeMaxCalls},
	}
	for i, st := range steps {
		env := s.Call(ctx, dispatcher.FuncNotifyStaff, map[string]any{"subject": st.subject, "body": st.body}).Envelope()
		got := ""
		if e, ok := env["error"].(map[string]any); ok {
			got = e["code"].(string)
		}
		if got != string(st.want) {
			t.Errorf("step %d: %v, want %q", i, env, st.want)
		}
	}
	raw, m := onlyNotice(t, dir)
	if !slices.Equal(m.To, []string{"boss@example.com"}) || strings.Contains(string(raw), "eve@evil") {
		t.Errorf("notice To %v:\n%s", m.To, raw)
	}
}

// onlyNotice reads the one message the outbox dir holds, failing the test
// when it holds another number.
func onlyNotice(t *testing.T, dir string) ([]byte, *message.Message) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	if len(files) != 1 {
		t.Fatalf("outbox has %d notices, want 1", len(files))
	}
	raw, _ := os.ReadFile(files[0])
	m, err := message.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return raw, m
}

// bodyOf is the decoded text of a rendered single-part message, in order.
func bodyOf(t *testing.T, raw []byte) string {
	t.Helper()
	e, err := gomessage.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(e.Body)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n")
}

// okRoutes answers every call of names with {"routed": name}.
func okRoutes(names ...string) map[string]dispatcher.Func {
	m := map[string]dispatcher.Func{}
	for _, n := range names {
		m[n] = dispatcher.Untyped(func(_ context.Context, c *dispatcher.Call) (map[string]any, error) {
			return map[string]any{"routed": c.Name}, nil
		})
	}
	return m
}

// sentResult is the result of the first successful send_email, or nil.
func sentResult(recs []dispatcher.Record) map[string]any {
	for _, r := range recs {
		if r.Name == dispatcher.FuncSendEmail && r.OK {
			return r.Result
		}
	}
	return nil
}
