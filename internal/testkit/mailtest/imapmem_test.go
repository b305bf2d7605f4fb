package mailtest

import (
	"net/smtp"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	gosmtp "github.com/emersion/go-smtp"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const testMsg = "From: a@example.com\r\nTo: b@example.com\r\nSubject: hi\r\nMessage-ID: <1@example.com>\r\n\r\nbody\r\n"

func TestIMAPKnobs(t *testing.T) {
	s := StartIMAP(t, IMAPOptions{NoKeywords: true, Mailboxes: []string{"Archive"}})
	uid := s.Append(t, "INBOX", []byte(testMsg), imap.FlagFlagged)
	c := s.Client(t)
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range sel.PermanentFlags {
		if f == imap.FlagWildcard {
			t.Errorf("PERMANENTFLAGS %v include \\* with NoKeywords", sel.PermanentFlags)
		}
	}
	err = c.Store(imap.UIDSetNum(uid), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Flags: []imap.Flag{"$Triaged"}}, nil).Close()
	if err == nil {
		t.Error("STORE of a keyword succeeded with NoKeywords")
	}
	if err := c.Store(imap.UIDSetNum(uid), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close(); err != nil {
		t.Errorf("STORE \\Seen: %v", err)
	}
	s.SetKeywords(true)
	if err := c.Store(imap.UIDSetNum(uid), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Flags: []imap.Flag{"$Triaged"}}, nil).Close(); err != nil {
		t.Errorf("STORE keyword after SetKeywords(true): %v", err)
	}

	s.ChangeUIDValidity(t, "INBOX")
	<-c.Closed() // ChangeUIDValidity drops every connection
	c2 := s.Client(t)
	sel2, err := c2.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	if sel2.UIDValidity == sel.UIDValidity {
		t.Errorf("UIDVALIDITY unchanged: %d", sel.UIDValidity)
	}
	msgs := ReadMailbox(t, c2, "INBOX")
	if len(msgs) != 1 || string(msgs[0].Raw) != testMsg || len(msgs[0].Flags) != 0 {
		t.Errorf("after the change: %+v, want the message without flags", msgs)
	}
	if got := ReadMailbox(t, c2, "Missing"); got != nil {
		t.Errorf("ReadMailbox of a missing mailbox = %v, want nil", got)
	}
	if n := s.DropConnections(); n != 1 {
		t.Errorf("DropConnections = %d, want 1", n)
	}
	<-c2.Closed()
}

func TestSMTPSink(t *testing.T) {
	s := StartSMTPSink(t, SMTPOptions{User: "u", Password: "p"})
	if err := smtp.SendMail(s.Addr, nil, "a@example.com", []string{"b@example.com"}, []byte(testMsg)); err == nil {
		t.Error("unauthenticated submission accepted")
	}
	s.FailNext(&smtpErr451)
	c, err := smtp.Dial(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Auth(smtp.PlainAuth("", "u", "p", "127.0.0.1")); err != nil {
		t.Fatal(err)
	}
	send := func() error {
		if err := c.Mail("a@example.com"); err != nil {
			return err
		}
		if err := c.Rcpt("b@example.com"); err != nil {
			return err
		}
		w, err := c.Data()
		if err != nil {
			return err
		}
		w.Write([]byte(testMsg))
		return w.Close()
	}
	if err := send(); err == nil || !strings.Contains(err.Error(), "451") {
		t.Errorf("first DATA: err = %v, want 451", err)
	}
	if err := send(); err != nil {
		t.Fatal(err)
	}
	<-s.Accepted()
	if n := s.CountByHeader("Message-ID")["<1@example.com>"]; n != 1 {
		t.Errorf("CountByHeader = %d, want 1", n)
	}
	got := s.Messages()
	if len(got) != 1 || got[0].From != "a@example.com" || got[0].Header("Subject") != "hi" {
		t.Errorf("messages = %+v", got)
	}
	if diff := cmp.Diff([]string{"PLAIN"}, s.Auths()); diff != "" {
		t.Errorf("auths (-want +got):\n%s", diff)
	}
}

var smtpErr451 = gosmtp.SMTPError{Code: 451, EnhancedCode: gosmtp.EnhancedCode{4, 3, 0}, Message: "try later"}

// TestIdleReportsEarlierDelivery: mail delivered after the client's last
// command but before IDLE is reported once IDLE begins, as Dovecot does
// (imapmemserver alone waits for the next change, and a watcher sleeps).
func TestIdleReportsEarlierDelivery(t *testing.T) {
	s := StartIMAP(t, IMAPOptions{})
	exists := make(chan uint32, 16)
	c, err := imapclient.DialInsecure(s.Addr, &imapclient.Options{
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{
			Mailbox: func(d *imapclient.UnilateralDataMailbox) {
				if d.NumMessages != nil {
					exists <- *d.NumMessages
				}
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(s.User, s.Password).Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	s.Append(t, "INBOX", []byte(testMsg)) // after SELECT, before IDLE
	idle, err := c.Idle()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-exists:
		if n != 1 {
			t.Errorf("EXISTS %d, want 1", n)
		}
	case <-time.After(30 * time.Second): // a hang guard only
		t.Fatal("IDLE never reported the message delivered before it began")
	}
	<-s.IdleStarted()
	s.Append(t, "INBOX", []byte(testMsg)) // after IdleStarted
	select {
	case n := <-exists:
		if n != 2 {
			t.Errorf("EXISTS %d, want 2", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("IDLE never reported the message delivered after IdleStarted")
	}
	if err := idle.Close(); err != nil {
		t.Fatal(err)
	}
	if err := idle.Wait(); err != nil {
		t.Fatal(err)
	}
}

// LIST ... RETURN (SPECIAL-USE) reports the attributes of the mailboxes
// created with IMAPOptions.SpecialUse and of those a client creates with
// CREATE ... (USE (...)); LIST (SPECIAL-USE) selects only those; a plain
// LIST reports every mailbox without them.
func TestIMAPSpecialUse(t *testing.T) {
	s := StartIMAP(t, IMAPOptions{Mailboxes: []string{"Archive"}, SpecialUse: map[string]imap.MailboxAttr{"Wysłane": imap.MailboxAttrSent}})
	c := s.Client(t)
	if err := c.Create("Szkice", &imap.CreateOptions{SpecialUse: []imap.MailboxAttr{imap.MailboxAttrDrafts}}).Wait(); err != nil {
		t.Fatal(err)
	}
	if err := c.Rename("Archive", "Old", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	list := func(opts *imap.ListOptions) map[string][]imap.MailboxAttr {
		t.Helper()
		data, err := c.List("", "*", opts).Collect()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]imap.MailboxAttr{}
		for _, d := range data {
			out[d.Mailbox] = d.Attrs
		}
		return out
	}
	want := map[string][]imap.MailboxAttr{"INBOX": nil, "Old": nil, "Wysłane": {imap.MailboxAttrSent}, "Szkice": {imap.MailboxAttrDrafts}}
	if diff := cmp.Diff(want, list(&imap.ListOptions{ReturnSpecialUse: true}), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("LIST RETURN (SPECIAL-USE) (-want +got):\n%s", diff)
	}
	want = map[string][]imap.MailboxAttr{"Wysłane": {imap.MailboxAttrSent}, "Szkice": {imap.MailboxAttrDrafts}}
	if diff := cmp.Diff(want, list(&imap.ListOptions{SelectSpecialUse: true})); diff != "" {
		t.Errorf("LIST (SPECIAL-USE) (-want +got):\n%s", diff)
	}
	want = map[string][]imap.MailboxAttr{"INBOX": nil, "Old": nil, "Wysłane": nil, "Szkice": nil}
	if diff := cmp.Diff(want, list(nil), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("plain LIST (-want +got):\n%s", diff)
	}
}

// With PlainListRoles (Microsoft 365's way) the server offers neither
// SPECIAL-USE nor LIST-EXTENDED, and a plain LIST carries the attributes.
func TestIMAPPlainListRoles(t *testing.T) {
	s := StartIMAP(t, IMAPOptions{PlainListRoles: true, SpecialUse: map[string]imap.MailboxAttr{"Sent Items": imap.MailboxAttrSent}})
	c := s.Client(t)
	if caps := c.Caps(); caps.Has(imap.CapSpecialUse) || caps.Has(imap.CapListExtended) {
		t.Errorf("capabilities %v offer SPECIAL-USE or LIST-EXTENDED", caps)
	}
	data, err := c.List("", "*", nil).Collect()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]imap.MailboxAttr{}
	for _, d := range data {
		got[d.Mailbox] = d.Attrs
	}
	want := map[string][]imap.MailboxAttr{"INBOX": nil, "Sent Items": {imap.MailboxAttrSent}}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("plain LIST (-want +got):\n%s", diff)
	}
}
