package watch

import (
	"context"
	"errors"
	"testing"

	"github.com/emersion/go-imap/v2"

	"triage/internal/testkit/mailtest"
)

// TestMemSpamToJunk: mail skipped as spam moves, unanswered, to the folder
// the server marks \Junk; a person's mail is answered and stays.
func TestMemSpamToJunk(t *testing.T) {
	s := mailtest.StartIMAP(t, mailtest.IMAPOptions{SpecialUse: map[string]imap.MailboxAttr{"Wiadomości-śmieci": imap.MailboxAttrJunk}})
	scenarioSpamToJunk(t, s.Target(), "Wiadomości-śmieci")
}

// Dovecot marks "Podejrzane" \Junk in its configuration (mailtest): the
// folder exists once created.
func TestDovecotSpamToJunk(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	tgt.CreateFolder(t, "Podejrzane")
	scenarioSpamToJunk(t, tgt, "Podejrzane")
}

func scenarioSpamToJunk(t *testing.T, tgt mailtest.Target, junkFolder string) {
	e := newEnv(t, tgt)
	spam := e.deliver(0, "deals@offers.example", "junkmail: 80% off")
	person := e.deliver(1, "jan@customer.example", "Reklamacja")
	w := e.runOnce(nil)
	if w.junk != junkFolder {
		t.Fatalf("junk folder %q, want %q, the one marked \\Junk", w.junk, junkFolder)
	}
	junk := e.mailbox(junkFolder)
	if len(junk) != 1 || headerOf(junk[0].Raw, "Message-ID") != spam {
		t.Fatalf("junk folder holds %v, want only %s", summary(junk, DefaultKeyword), spam)
	}
	inbox := e.mailbox("INBOX")
	if len(inbox) != 1 || headerOf(inbox[0].Raw, "Message-ID") != person {
		t.Errorf("INBOX holds %v, want only %s", summary(inbox, DefaultKeyword), person)
	}
	if got := e.repliesTo(); got[spam] != 0 || got[person] != 1 {
		t.Errorf("replies %v: want none to the spam, one to the person", got)
	}
}

// TestMemSpamJunkConfigured: imap.junk_folder names the folder; without a
// \Junk folder or a setting, spam stays in the mailbox, flagged as
// handled; a configured folder that does not exist stops watch with a
// FolderError.
func TestMemSpamJunkConfigured(t *testing.T) {
	t.Run("configured", func(t *testing.T) {
		s := mailtest.StartIMAP(t, mailtest.IMAPOptions{Mailboxes: []string{"Podejrzane"}, SpecialUse: map[string]imap.MailboxAttr{"Junk": imap.MailboxAttrJunk}})
		e := newEnv(t, s.Target())
		spam := e.deliver(0, "deals@offers.example", "junkmail offer")
		e.runOnce(func(c *Config) { c.JunkFolder = "Podejrzane" })
		if got := e.mailbox("Podejrzane"); len(got) != 1 || headerOf(got[0].Raw, "Message-ID") != spam {
			t.Errorf("Podejrzane holds %v, want %s", summary(got, DefaultKeyword), spam)
		}
		if got := e.mailbox("Junk"); len(got) != 0 {
			t.Errorf("Junk holds %v, want nothing", summary(got, DefaultKeyword))
		}
	})
	t.Run("no junk folder", func(t *testing.T) {
		s := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
		e := newEnv(t, s.Target())
		spam := e.deliver(0, "deals@offers.example", "junkmail offer")
		e.runOnce(nil)
		inbox := e.mailbox("INBOX")
		if len(inbox) != 1 || headerOf(inbox[0].Raw, "Message-ID") != spam || !inbox[0].HasFlag(imap.Flag(DefaultKeyword)) {
			t.Errorf("INBOX holds %v, want the spam flagged %s", summary(inbox, DefaultKeyword), DefaultKeyword)
		}
		if got := e.repliesTo(); got[spam] != 0 {
			t.Errorf("the spam was answered: %v", got)
		}
	})
	t.Run("configured folder missing", func(t *testing.T) {
		s := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
		e := newEnv(t, s.Target())
		e.deliver(0, "deals@offers.example", "junkmail offer")
		err := e.watcher(func(c *Config) { c.JunkFolder = "Spam" }).RunOnce(context.Background())
		var fe *FolderError
		if !errors.As(err, &fe) || fe.Setting != "imap.junk_folder" || fe.Role != string(imap.MailboxAttrJunk) {
			t.Errorf("RunOnce: %v, want a FolderError for imap.junk_folder", err)
		}
	})
}
