package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	netmail "net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/clients/tickets"
	"triage/internal/message"
	"triage/internal/replies"
	"triage/internal/review"
	"triage/internal/testkit/mailtest"
	"triage/internal/watch"
)

// watchEnv is a watch configuration against an in-memory IMAP server, with
// the offline model, the sample registry and no SMTP.
type watchEnv struct {
	srv    *mailtest.IMAP
	dir    string
	config string
	ledger string
}

func newWatchEnv(t *testing.T, extra string) *watchEnv {
	t.Helper()
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "")
	e := &watchEnv{srv: mailtest.StartIMAP(t, mailtest.IMAPOptions{Mailboxes: []string{"Sent", "Szkice"}}), dir: t.TempDir()}
	t.Setenv("TRIAGE_IMAP_PASSWORD", e.srv.Password)
	e.config, e.ledger = filepath.Join(e.dir, "triage.yaml"), filepath.Join(e.dir, "ledger.db")
	csv, err := filepath.Abs("../../examples/warranty.csv")
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, e.config, "imap:\n  addr: "+e.srv.Addr+"\n  tls: none\n  user: "+e.srv.User+"\n"+
		"  sent_folder: Sent\n  drafts_folder: Szkice\n"+
		"ledger: ledger.db\nlog: {level: debug}\n"+
		"pipeline:\n  offline: true\n  from: \"Serwis <serwis@example.com>\"\n  warranty_csv: "+csv+"\n  tickets_db: tickets.db\n"+extra)
	return e
}

func (e *watchEnv) deliver(t *testing.T, file string) string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Append(t, "INBOX", raw)
	m, err := message.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return m.MessageID
}

func (e *watchEnv) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// Draft mode end to end: `reply_mode: draft` in the configuration, no smtp
// section: the offline pipeline's reply lands in the drafts folder
// (drafts_folder) flagged \Draft; the person sends it as is from their
// client; `triage ledger stats` then reports it per scenario.
func TestWatchDraftModeAndStats(t *testing.T) {
	e := newWatchEnv(t, "reply_mode: draft\n")
	inbound := e.deliver(t, "../../examples/inbox/01-valid-warranty-pl.eml")
	if code, _, stderr := e.run(t, "watch", "--config", e.config, "--once"); code != 0 {
		t.Fatalf("watch exit %d\n%s", code, stderr)
	}
	drafts := e.srv.Messages(t, "Szkice")
	if len(drafts) != 1 || !drafts[0].HasFlag(imap.FlagDraft) {
		t.Fatalf("Szkice holds %d messages (flags %v), want one \\Draft", len(drafts), drafts)
	}
	d, err := message.Parse(drafts[0].Raw)
	if err != nil || d.InReplyTo != inbound || !strings.Contains(d.Text, "SN-48213-PL") {
		t.Fatalf("draft In-Reply-To %q (want %q), text %q, err %v", d.InReplyTo, inbound, d.Text, err)
	}
	code, stdout, stderr := e.run(t, "ledger", "stats", "--config", e.config, "--json")
	if code != 0 {
		t.Fatalf("ledger stats exit %d: %s", code, stderr)
	}
	if want := `{"scenario":"valid-warranty","account":"support@example.com","mailbox":"INBOX","drafted":1,"sent_as_is":0,"edited":0,"rejected":0,"discarded":0,"pending":1,` +
		`"readiness":{"reviewed":0,"sent_as_is":0,"edited":0,"rejected":0,"discarded":0,"ready":false,"why":"0 of 30 reviewed drafts needed"},` +
		`"min_reviewed":30,"min_sent_as_is":90,"switches":[]}` + "\n"; stdout != want {
		t.Errorf("ledger stats --json = %q, want %q", stdout, want)
	}

	// The person sends the draft from their client: new Message-ID, same text.
	sent := "From: Serwis <serwis@example.com>\r\nTo: Anna Nowak <anna.nowak@example.pl>\r\nSubject: " + d.Subject + "\r\nMessage-ID: <person-1@example.com>\r\n" +
		"In-Reply-To: " + inbound + "\r\nReferences: " + inbound + "\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + d.Text + "\r\n"
	e.srv.Append(t, "Sent", []byte(sent))
	if code, _, stderr := e.run(t, "watch", "--config", e.config, "--once"); code != 0 {
		t.Fatalf("second watch exit %d\n%s", code, stderr)
	}
	_, stdout, _ = e.run(t, "ledger", "stats", "--config", e.config, "--json")
	var got review.DraftStat
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stats %q: %v", stdout, err)
	}
	inbox := triage.Inbox{Account: "support@example.com", Mailbox: "INBOX"}
	if diff := cmp.Diff(review.DraftStat{Scenario: "valid-warranty", Inbox: inbox, Drafted: 1, SentAsIs: 1}, got); diff != "" {
		t.Errorf("stats after the person sent the draft (-want +got):\n%s", diff)
	}
	_, stdout, _ = e.run(t, "ledger", "stats", "--config", e.config)
	for _, want := range []string{"SCENARIO", "SENT AS IS", "valid-warranty", "support@example.com/INBOX", "1/1 100%", "READY", "1 of 30 reviewed drafts needed"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("ledger stats lacks %q:\n%s", want, stdout)
		}
	}
	_, stdout, _ = e.run(t, "ledger", "--config", e.config, "--replies")
	for _, want := range []string{"KIND", "draft", string(replies.DraftStored), replies.DraftSentAsIs} {
		if !strings.Contains(stdout, want) {
			t.Errorf("ledger --replies lacks %q:\n%s", want, stdout)
		}
	}
	_, stdout, _ = e.run(t, "ledger", "--config", e.config)
	if !strings.Contains(stdout, "drafted") {
		t.Errorf("ledger does not show the message drafted:\n%s", stdout)
	}
}

// A draft sent as it was is a draft sent, not a takeover: the customer's
// next email joins the conversation and gets a new draft, instead of going
// to Needs-Human as a conversation a person owns.
func TestWatchDraftSentIsNoTakeover(t *testing.T) {
	e := newWatchEnv(t, "  staff: [kierownik@example.com]\nreply_mode: draft\noutbox: notices\n")
	inbound := e.deliver(t, "../../examples/inbox/01-valid-warranty-pl.eml")
	if code, _, stderr := e.run(t, "watch", "--config", e.config, "--once"); code != 0 {
		t.Fatalf("watch exit %d\n%s", code, stderr)
	}
	drafts := e.srv.Messages(t, "Szkice")
	if len(drafts) != 1 {
		t.Fatalf("Szkice holds %d messages, want the draft", len(drafts))
	}
	d, err := message.Parse(drafts[0].Raw)
	if err != nil {
		t.Fatal(err)
	}
	// The shared mailbox sends the draft unchanged.
	e.srv.Append(t, "Sent", []byte("From: Serwis <serwis@example.com>\r\nTo: Anna Nowak <anna.nowak@example.pl>\r\nSubject: "+d.Subject+
		"\r\nMessage-ID: <person-1@example.com>\r\nIn-Reply-To: "+inbound+"\r\nReferences: "+inbound+
		"\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"+d.Text+"\r\n"))
	if code, _, stderr := e.run(t, "watch", "--config", e.config, "--once"); code != 0 {
		t.Fatalf("second watch exit %d\n%s", code, stderr)
	}
	// The customer answers the mail the shared mailbox sent.
	e.srv.Append(t, "INBOX", []byte("From: Anna Nowak <anna.nowak@example.pl>\r\nTo: serwis@example.com\r\nSubject: Re: "+d.Subject+
		"\r\nMessage-ID: <anna-2@example.pl>\r\nIn-Reply-To: <person-1@example.com>\r\nReferences: "+inbound+" <person-1@example.com>"+
		"\r\nDate: Tue, 17 Nov 2026 10:00:00 +0100\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nKiedy kurier odbierze ekspres?\r\n"))
	if code, _, stderr := e.run(t, "watch", "--config", e.config, "--once"); code != 0 {
		t.Fatalf("third watch exit %d\n%s", code, stderr)
	}
	if n := len(e.srv.Messages(t, watch.DefaultFailedFolder)); n != 0 {
		t.Errorf("%s holds %d messages: the customer's answer was left for a person", watch.DefaultFailedFolder, n)
	}
	var replyTo []string
	for _, m := range e.srv.Messages(t, "Szkice") {
		pm, err := message.Parse(m.Raw)
		if err != nil {
			t.Fatal(err)
		}
		replyTo = append(replyTo, pm.InReplyTo)
	}
	slices.Sort(replyTo)
	if diff := cmp.Diff([]string{inbound, "<anna-2@example.pl>"}, replyTo); diff != "" {
		t.Errorf("drafts by In-Reply-To (-want +got):\n%s", diff)
	}
	code, stdout, stderr := e.run(t, "tickets", "list", "--config", e.config, "--json")
	if code != 0 || strings.Contains(stdout, `"agent_disabled":true`) {
		t.Errorf("tickets list (exit %d): the conversation is taken over:\n%s%s", code, stdout, stderr)
	}
}

// --dry-run on watch: every new message is processed and its outcome
// logged, and nothing changes: no ledger file, no flag, no folder, no
// ticket store.
func TestWatchDryRun(t *testing.T) {
	e := newWatchEnv(t, "")
	e.deliver(t, "../../examples/inbox/01-valid-warranty-pl.eml")
	e.deliver(t, "../../examples/inbox/05-no-serial-pl.eml")
	code, _, stderr := e.run(t, "watch", "--config", e.config, "--once", "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if n := strings.Count(stderr, "dry run: message"); n != 2 || !strings.Contains(stderr, "status=replied") || !strings.Contains(stderr, "create_ticket (dry run)") {
		t.Errorf("stderr reports %d dry-run outcomes, want 2 with status and calls:\n%s", n, stderr)
	}
	for _, m := range e.srv.Messages(t, "INBOX") {
		if len(m.Flags) != 0 {
			t.Errorf("message %d got flags %v in a dry run", m.UID, m.Flags)
		}
	}
	for _, f := range []string{"Sent", "Szkice", watch.DefaultFailedFolder} {
		if msgs := e.srv.Messages(t, f); len(msgs) != 0 {
			t.Errorf("%s holds %d messages after a dry run", f, len(msgs))
		}
	}
	if got := dirFiles(t, e.dir); len(got) != 1 || got[0] != "triage.yaml" {
		t.Errorf("the dry run left files %v, want only the configuration", got)
	}
}

// A person's reply in a thread takes its ticket over, and the owner shown
// is the person (the Sender header, or a display name that is not the
// mailbox's own), else "a person via" the mailbox, never the bare shared
// address. A reply that is triage's draft, sent as it was or edited, is a
// draft sent: it joins the ticket, and the conversation stays triage's.
func TestPersonReplyHookTakesOver(t *testing.T) {
	ctx := context.Background()
	const shared = "serwis@example.com"
	tests := []struct {
		name      string
		reply     watch.PersonReply
		takenOver bool
		owner     string
	}{
		{"a person's own reply, Sender header", watch.PersonReply{MessageID: "<p@x>", From: shared, FromName: "Serwis gwarancyjny",
			Sender: netmail.Address{Name: "Ewa Nowak", Address: "ewa@example.com"}}, true, "Ewa Nowak <ewa@example.com>"},
		{"a person's own reply, their display name", watch.PersonReply{MessageID: "<p@x>", From: shared, FromName: "Ewa Nowak"},
			true, "Ewa Nowak via " + shared},
		{"a person's own reply, the mailbox's name only", watch.PersonReply{MessageID: "<p@x>", From: shared, FromName: "serwis GWARANCYJNY"},
			true, "a person via " + shared},
		{"a person's own reply, no name", watch.PersonReply{MessageID: "<p@x>", From: shared}, true, "a person via " + shared},
		{"a person's own reply from their own address", watch.PersonReply{MessageID: "<p@x>", From: "ewa@example.com", FromName: "Ewa Nowak"},
			true, "Ewa Nowak <ewa@example.com>"},
		{"triage's draft sent as it was", watch.PersonReply{MessageID: "<p@x>", From: shared, DraftOutcome: replies.DraftSentAsIs, Similarity: 1}, false, ""},
		{"triage's draft edited", watch.PersonReply{MessageID: "<p@x>", From: shared, DraftOutcome: replies.DraftEdited, Similarity: 0.5}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := tickets.OpenSQLite(filepath.Join(t.TempDir(), "t.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			tk, err := db.Create(ctx, tickets.Request{IdempotencyKey: "k", SerialNumber: "SN1", CustomerEmail: "anna@example.pl", Priority: "normal"})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.AddMessage(ctx, tk.TicketID, tickets.Message{MessageID: "<in-1@example.pl>", Direction: tickets.Inbound, At: time.Now()}); err != nil {
				t.Fatal(err)
			}
			hook := personReplyHook(db, []string{shared, "Serwis gwarancyjny", "Warranty Service"}, slog.New(slog.DiscardHandler))
			if hook == nil {
				t.Fatal("no hook for a store with conversations")
			}
			for _, id := range []string{"<elsewhere@x>", "<in-1@example.pl>"} {
				r := tt.reply
				r.Thread = review.Thread{MessageID: id, Sender: "anna@example.pl"}
				if err := hook(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			st, err := db.Get(ctx, tk.TicketID)
			if err != nil {
				t.Fatal(err)
			}
			if st.AgentDisabled != tt.takenOver || st.Owner != tt.owner {
				t.Errorf("ticket after the reply: agent_disabled %v owner %q, want %v %q", st.AgentDisabled, st.Owner, tt.takenOver, tt.owner)
			}
			if !st.Has("<p@x>") {
				t.Errorf("the reply is not part of the conversation: %+v", st.Messages)
			}
		})
	}
	// A store that only creates tickets (no conversations) gets no hook.
	db, err := tickets.OpenSQLite(filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if personReplyHook(struct{ tickets.Creator }{db}, nil, slog.New(slog.DiscardHandler)) != nil {
		t.Error("a hook for a store without conversations")
	}
}

func TestWatchHelpDocumentsDrafts(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"watch", "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"reply_mode", "drafts_folder", "--reply-mode", "--drafts-folder", "--dry-run", "triage ledger stats"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("watch --help lacks %q", want)
		}
	}
}

// A stranger who planted a customer's Message-ID on a ticket of their own
// (it is no secret: it travels in every Cc) does not get a person's reply
// to that customer: the reply takes over, and joins, the ticket of the
// customer it answers, never the stranger's.
func TestPersonReplyHookPlantedMessageID(t *testing.T) {
	ctx := context.Background()
	const shared, planted = "serwis@example.com", "<anna-1@example.pl>"
	for _, draft := range []string{"", replies.DraftSentAsIs} {
		t.Run("draft="+draft, func(t *testing.T) {
			db, err := tickets.OpenSQLite(filepath.Join(t.TempDir(), "t.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			open := func(key, customer string) string {
				tk, err := db.Create(ctx, tickets.Request{IdempotencyKey: key, SerialNumber: "SN1", CustomerEmail: customer, Priority: "normal"})
				if err != nil {
					t.Fatal(err)
				}
				if err := db.AddMessage(ctx, tk.TicketID, tickets.Message{MessageID: planted, Direction: tickets.Inbound, From: customer, At: time.Now()}); err != nil {
					t.Fatal(err)
				}
				return tk.TicketID
			}
			eve := open("k-eve", "eve@evil.example") // first: the earliest ticket holding the ID
			anna := open("k-anna", "anna@example.pl")
			hook := personReplyHook(db, []string{shared}, slog.New(slog.DiscardHandler))
			r := watch.PersonReply{MessageID: "<p@x>", From: "ewa@example.com", FromName: "Ewa Nowak", DraftOutcome: draft,
				Thread: review.Thread{MessageID: planted, Sender: "anna@example.pl"}}
			if err := hook(ctx, r); err != nil {
				t.Fatal(err)
			}
			est, err := db.Get(ctx, eve)
			if err != nil {
				t.Fatal(err)
			}
			if est.AgentDisabled || est.Has("<p@x>") {
				t.Errorf("the stranger's ticket took the reply to the customer: %+v", est)
			}
			ast, err := db.Get(ctx, anna)
			if err != nil {
				t.Fatal(err)
			}
			if !ast.Has("<p@x>") || ast.AgentDisabled != (draft == "") {
				t.Errorf("the customer's ticket after the reply: agent_disabled %v, messages %+v", ast.AgentDisabled, ast.Messages)
			}
		})
	}
}
