package watch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/google/go-cmp/cmp"

	"triage/internal/message"
	"triage/internal/replies"
	"triage/internal/testkit/mailtest"
)

// The in-memory server marks folders with names no default would guess.
func TestMemFoldersByRole(t *testing.T) {
	s := mailtest.StartIMAP(t, mailtest.IMAPOptions{SpecialUse: map[string]imap.MailboxAttr{
		"Elementy wysłane": imap.MailboxAttrSent, "Robocze": imap.MailboxAttrDrafts}})
	scenarioFoldersByRole(t, s.Target(), "Elementy wysłane", "Robocze")
}

// Microsoft 365 offers neither SPECIAL-USE nor LIST-EXTENDED but marks
// its folders in a plain LIST.
func TestMemFoldersByRolePlainList(t *testing.T) {
	s := mailtest.StartIMAP(t, mailtest.IMAPOptions{PlainListRoles: true, SpecialUse: map[string]imap.MailboxAttr{
		"Sent Items": imap.MailboxAttrSent, "Drafts Folder": imap.MailboxAttrDrafts}})
	scenarioFoldersByRole(t, s.Target(), "Sent Items", "Drafts Folder")
}

// Dovecot marks "Sent Items" \Sent and "Robocze" \Drafts in its
// configuration (mailtest): the folders exist once created.
func TestDovecotFoldersByRole(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	for _, f := range []string{"Sent Items", "Robocze"} {
		tgt.CreateFolder(t, f)
	}
	scenarioFoldersByRole(t, tgt, "Sent Items", "Robocze")
}

// scenarioFoldersByRole: with neither sent_folder nor drafts_folder
// configured, the watcher finds the folders the server marks \Sent and
// \Drafts (RFC 6154) and creates no Sent or Drafts of its own. A reply is
// filed in the \Sent folder; then, as with Gmail and Microsoft 365
// (save_sent: false), the provider files what SMTP sent and triage appends
// nothing, yet the Sent scan still works: a draft a person sent as is is
// resolved, a person's reply in a handled thread is reported (takeover),
// and triage's own reply filed by the provider is not mistaken for one.
func scenarioFoldersByRole(t *testing.T, tgt mailtest.Target, sent, drafts string) {
	e := newEnv(t, tgt)
	hooks := &hookLog{}
	saveSent := true
	mod := func(c *Config) { c.NoSaveSent = !saveSent; c.OnPersonReply = hooks.hook }

	id0 := e.deliver(0, "jan@customer.example", "Wysłane")
	w := e.runOnce(mod)
	if w.sent != sent || w.drafts != drafts || w.draftsFallback {
		t.Fatalf("folders found: sent %q drafts %q (fallback %v); want %q and %q", w.sent, w.drafts, w.draftsFallback, sent, drafts)
	}
	if got := e.mailbox(sent); len(got) != 1 || headerOf(got[0].Raw, "In-Reply-To") != id0 {
		t.Fatalf("%s holds %v, want our reply to %s", sent, summary(got, DefaultKeyword), id0)
	}

	// save_sent: false from here on: the provider files the sent copy.
	saveSent = false
	e.proc.draft = true
	id1 := e.deliver(1, "ola@customer.example", "Gwarancja")
	e.runOnce(mod)
	e.proc.draft = false
	id2 := e.deliver(2, "ewa@customer.example", "Naprawa")
	e.runOnce(mod)
	if got := e.mailbox(sent); len(got) != 1 {
		t.Errorf("with save_sent false triage appended to %s: %v", sent, summary(got, DefaultKeyword))
	}
	var draft []byte
	for _, m := range e.mailbox(drafts) {
		if headerOf(m.Raw, "In-Reply-To") == id1 && m.HasFlag(imap.FlagDraft) {
			draft = m.Raw
		}
	}
	if draft == nil {
		t.Fatalf("no draft for %s in %s: %v", id1, drafts, summary(e.mailbox(drafts), DefaultKeyword))
	}
	for _, m := range e.sink.Messages() {
		if m.Header("In-Reply-To") == id2 {
			e.tgt.Append(t, sent, m.Data, imap.FlagSeen) // the provider files it
		}
	}
	// A person sends Ola's draft as is and writes to Jan in his thread.
	e.tgt.Append(t, sent, personReply(1, "ola@customer.example", id1, draftTextOf(t, draft)))
	e.tgt.Append(t, sent, personReply(3, "jan@customer.example", id0, "Dzień dobry, jeszcze jedna informacja od nas."))
	e.runOnce(mod)

	want := []string{id1 + " <person-1@example.com> " + replies.DraftSentAsIs, id0 + " <person-3@example.com> "}
	if diff := cmp.Diff(want, hooks.summary()); diff != "" {
		t.Errorf("person's replies seen in %s (-want +got):\n%s", sent, diff)
	}
	for _, f := range []string{"Sent", DefaultDraftsFolder} {
		if f != sent && f != drafts && tgt.HasFolder(t, f) {
			t.Errorf("folder %s was created; the server's %s and %s serve", f, sent, drafts)
		}
	}
}

// draftTextOf is the new text of a draft.
func draftTextOf(t *testing.T, raw []byte) string {
	t.Helper()
	m, err := message.Parse(raw)
	if err != nil || strings.TrimSpace(m.Text) == "" {
		t.Fatalf("draft text: %v\n%s", err, raw)
	}
	return m.Text
}

// A configured Sent or Drafts folder the server does not have stops the
// watcher at connect with a *FolderError naming the setting and the
// folders that exist; Run does not retry it; nothing is processed and no
// folder is created.
func TestConfiguredFolderMissing(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want []string
	}{
		{"sent", func(c *Config) { c.SentFolder = "Sent" },
			[]string{`imap.sent_folder "Sent": no such folder`, `"INBOX", "Needs-Human", "Sent Items"`, `use "Sent Items", the folder the server marks \Sent`}},
		{"drafts", func(c *Config) { c.DraftsFolder = "Szkice" },
			[]string{`imap.drafts_folder "Szkice": no such folder`, `"Sent Items"`, `(it marks none)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mailtest.StartIMAP(t, mailtest.IMAPOptions{Mailboxes: []string{DefaultFailedFolder},
				SpecialUse: map[string]imap.MailboxAttr{"Sent Items": imap.MailboxAttrSent}})
			e := newEnv(t, s.Target())
			e.deliver(0, "jan@customer.example", "Gwarancja")
			w, err := New(e.config(tt.mod))
			if err != nil {
				t.Fatal(err)
			}
			for _, run := range []struct {
				name string
				f    func(context.Context) error
			}{{"RunOnce", w.RunOnce}, {"Run", w.Run}} {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				err := run.f(ctx)
				timedOut := ctx.Err() != nil
				cancel()
				var fe *FolderError
				if !errors.As(err, &fe) || timedOut {
					t.Fatalf("%s = %v (timed out: %v), want a *FolderError at once", run.name, err, timedOut)
				}
				for _, s := range tt.want {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("%s: error %q does not say %q", run.name, err, s)
					}
				}
			}
			if st := w.Stats(); st.Reconnects != 0 || st.Passes != 0 || e.proc.Calls() != 0 {
				t.Errorf("stats %+v, %d pipeline calls; want no reconnect, no pass, no call", st, e.proc.Calls())
			}
			for _, f := range []string{"Sent", "Szkice"} {
				if s.Target().HasFolder(t, f) {
					t.Errorf("folder %s was created", f)
				}
			}
		})
	}
}
