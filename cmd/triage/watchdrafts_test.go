package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/google/go-cmp/cmp"

	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/mailtest"
	"triage/internal/message"
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
	e := &watchEnv{srv: mailtest.StartIMAP(t, mailtest.IMAPOptions{Mailboxes: []string{"Sent"}}), dir: t.TempDir()}
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
	if want := `{"scenario":"valid-warranty","drafted":1,"sent_as_is":0,"edited":0,"discarded":0,"pending":1}` + "\n"; stdout != want {
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
	var got ledger.DraftStat
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stats %q: %v", stdout, err)
	}
	if diff := cmp.Diff(ledger.DraftStat{Scenario: "valid-warranty", Drafted: 1, SentAsIs: 1}, got); diff != "" {
		t.Errorf("stats after the person sent the draft (-want +got):\n%s", diff)
	}
	_, stdout, _ = e.run(t, "ledger", "stats", "--config", e.config)
	for _, want := range []string{"SCENARIO", "SENT AS IS", "valid-warranty", "100%"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("ledger stats lacks %q:\n%s", want, stdout)
		}
	}
	_, stdout, _ = e.run(t, "ledger", "--config", e.config, "--replies")
	for _, want := range []string{"KIND", "draft", string(ledger.DraftStored), ledger.DraftSentAsIs} {
		if !strings.Contains(stdout, want) {
			t.Errorf("ledger --replies lacks %q:\n%s", want, stdout)
		}
	}
	_, stdout, _ = e.run(t, "ledger", "--config", e.config)
	if !strings.Contains(stdout, "drafted") {
		t.Errorf("ledger does not show the message drafted:\n%s", stdout)
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

// A person's reply in a thread takes its ticket over.
func TestPersonReplyHookTakesOver(t *testing.T) {
	ctx := context.Background()
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
	hook := personReplyHook(db, slog.New(slog.DiscardHandler))
	if hook == nil {
		t.Fatal("no hook for a store with conversations")
	}
	for _, id := range []string{"<elsewhere@x>", "<in-1@example.pl>"} {
		if err := hook(ctx, watch.PersonReply{MessageID: "<p@x>", From: "ewa@example.com", Thread: ledger.Thread{MessageID: id}}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := db.Get(ctx, tk.TicketID)
	if err != nil {
		t.Fatal(err)
	}
	if !st.AgentDisabled || st.Owner != "ewa@example.com" {
		t.Errorf("ticket after the person's reply: agent_disabled %v owner %q, want taken over by ewa@example.com", st.AgentDisabled, st.Owner)
	}
	// A store that only creates tickets (no conversations) gets no hook.
	if personReplyHook(struct{ tickets.Creator }{db}, slog.New(slog.DiscardHandler)) != nil {
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
