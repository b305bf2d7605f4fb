package mailtest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/google/go-cmp/cmp"
)

const dovecotTestMessage = "From: Jan Kowalski <jan@example.org>\r\n" +
	"To: support@example.com\r\n" +
	"Subject: Gwarancja SN-12345\r\n" +
	"Message-ID: <dovecot-test-1@example.org>\r\n" +
	"Date: Sun, 22 Nov 2026 08:00:00 +0000\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n" +
	"\r\n" +
	"Dzień dobry, mój ekspres SN-12345 nie działa.\r\n"

// dial logs in with the fields of d, as a watcher configured with them would.
func dial(t *testing.T, d *Dovecot, user, password string, opts *imapclient.Options) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(d.Addr, opts)
	if err != nil {
		t.Fatalf("dial %s: %v", d.Addr, err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Login(user, password).Wait(); err != nil {
		t.Fatalf("login %s: %v", user, err)
	}
	return c
}

func appendMessage(t *testing.T, c *imapclient.Client, mailbox, raw string) *imap.AppendData {
	t.Helper()
	cmd := c.Append(mailbox, int64(len(raw)), nil)
	if _, err := io.WriteString(cmd, raw); err != nil {
		t.Fatalf("append: %v", err)
	}
	if err := cmd.Close(); err != nil {
		t.Fatalf("append: %v", err)
	}
	data, err := cmd.Wait()
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return data
}

// fetched is what the tests compare of one message.
type fetched struct {
	UID   imap.UID
	Flags []imap.Flag
	Body  string
}

func fetchAll(t *testing.T, c *imapclient.Client) []fetched {
	t.Helper()
	section := &imap.FetchItemBodySection{Peek: true}
	msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{
		UID: true, Flags: true, BodySection: []*imap.FetchItemBodySection{section},
	}).Collect()
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	var got []fetched
	for _, m := range msgs {
		flags := slices.Clone(m.Flags)
		slices.Sort(flags)
		got = append(got, fetched{UID: m.UID, Flags: flags, Body: string(m.FindBodySection(section))})
	}
	return got
}

func TestDovecotWatcherOperations(t *testing.T) {
	d := StartDovecot(t)
	t.Logf("dovecot %s started in %v", d.Version, d.StartupTime)
	c := dial(t, d, d.User, d.Password, nil)

	caps, err := c.Capability().Wait()
	if err != nil {
		t.Fatalf("capability: %v", err)
	}
	for _, want := range []imap.Cap{imap.CapMove, imap.CapIdle, imap.CapUIDPlus} {
		if !caps.Has(want) {
			t.Errorf("CAPABILITY lacks %s", want)
		}
	}

	appended := appendMessage(t, c, "INBOX", dovecotTestMessage)

	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatalf("select INBOX: %v", err)
	}
	if sel.UIDValidity == 0 {
		t.Errorf("UIDVALIDITY = 0")
	}
	if sel.UIDValidity != appended.UIDValidity {
		t.Errorf("UIDVALIDITY = %d, APPENDUID said %d", sel.UIDValidity, appended.UIDValidity)
	}
	if sel.UIDNext != appended.UID+1 {
		t.Errorf("UIDNEXT = %d, want %d (appended UID + 1)", sel.UIDNext, appended.UID+1)
	}
	if sel.NumMessages != 1 {
		t.Errorf("EXISTS = %d, want 1", sel.NumMessages)
	}
	if !slices.Contains(sel.PermanentFlags, imap.FlagWildcard) {
		t.Errorf("PERMANENTFLAGS %v lack \\* (keywords not allowed)", sel.PermanentFlags)
	}

	uids := imap.UIDSetNum(appended.UID)
	store := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{"$Triaged"}}
	if err := c.Store(uids, store, nil).Close(); err != nil {
		t.Fatalf("store $Triaged: %v", err)
	}
	// Dovecot speaks IMAP4rev1: the session that first sees a new message
	// gets \Recent with it (imapmemserver never sets it).
	want := []fetched{{UID: appended.UID, Flags: []imap.Flag{"$Triaged", `\Recent`}, Body: dovecotTestMessage}}
	if diff := cmp.Diff(want, fetchAll(t, c)); diff != "" {
		t.Errorf("INBOX after STORE (-want +got):\n%s", diff)
	}

	if err := c.Create("Needs-Human", nil).Wait(); err != nil {
		t.Fatalf("create Needs-Human: %v", err)
	}
	moved, err := c.Move(uids, "Needs-Human").Wait()
	if err != nil {
		t.Fatalf("move: %v", err)
	}

	status, err := c.Status("INBOX", &imap.StatusOptions{NumMessages: true}).Wait()
	if err != nil {
		t.Fatalf("status INBOX: %v", err)
	}
	if *status.NumMessages != 0 {
		t.Errorf("INBOX has %d messages after MOVE, want 0", *status.NumMessages)
	}

	sel, err = c.Select("Needs-Human", nil).Wait()
	if err != nil {
		t.Fatalf("select Needs-Human: %v", err)
	}
	if moved.UIDValidity != sel.UIDValidity {
		t.Errorf("COPYUID UIDVALIDITY = %d, SELECT says %d", moved.UIDValidity, sel.UIDValidity)
	}
	destUIDs, _ := moved.DestUIDs.(imap.UIDSet)
	destUID, _ := destUIDs.Nums()
	if len(destUID) != 1 {
		t.Fatalf("COPYUID destination UIDs = %v, want one", moved.DestUIDs)
	}
	want = []fetched{{UID: destUID[0], Flags: []imap.Flag{"$Triaged", `\Recent`}, Body: dovecotTestMessage}}
	if diff := cmp.Diff(want, fetchAll(t, c)); diff != "" {
		t.Errorf("Needs-Human after MOVE (-want +got):\n%s", diff)
	}
}

func TestDovecotRestartKeepsMail(t *testing.T) {
	d := StartDovecot(t)
	uid := d.Append(t, "INBOX", []byte(dovecotTestMessage), "$Triaged")
	c := d.Client(t)
	before, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatalf("select: %v", err)
	}
	addr := d.Addr

	began := time.Now()
	d.Restart(t)
	t.Logf("restart took %v (start %v)", time.Since(began), d.StartupTime)

	if d.Addr != addr {
		t.Errorf("Addr after Restart = %s, want %s", d.Addr, addr)
	}
	// The old connection was cut by the restart.
	if err := c.Noop().Wait(); err == nil {
		t.Errorf("NOOP on a connection from before the restart succeeded")
	}
	c = d.Client(t)
	after, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatalf("select after restart: %v", err)
	}
	if diff := cmp.Diff([2]any{before.UIDValidity, before.UIDNext}, [2]any{after.UIDValidity, after.UIDNext}); diff != "" {
		t.Errorf("UIDVALIDITY, UIDNEXT changed by restart (-before +after):\n%s", diff)
	}
	want := []fetched{{UID: uid, Flags: []imap.Flag{"$Triaged"}, Body: dovecotTestMessage}}
	if diff := cmp.Diff(want, fetchAll(t, c)); diff != "" {
		t.Errorf("INBOX after restart (-want +got):\n%s", diff)
	}
}

func TestDovecotStopRefusesConnections(t *testing.T) {
	d := StartDovecot(t)
	d.Stop(t)
	if c, err := imapclient.DialInsecure(d.Addr, nil); err == nil {
		c.Close()
		t.Fatalf("dial %s succeeded after Stop", d.Addr)
	}
	d.Restart(t)
	d.Client(t) // logs in again
}

func TestDovecotUsers(t *testing.T) {
	d := StartDovecot(t)
	otherPassword := d.AddUser(t, "sales@example.com")
	if pw, ok := d.UserPassword("sales@example.com"); !ok || pw != otherPassword {
		t.Errorf("UserPassword(sales) = %q, %v; want %q, true", pw, ok, otherPassword)
	}
	if pw, ok := d.UserPassword(DovecotUser); !ok || pw != d.Password {
		t.Errorf("UserPassword(default) = %q, %v; want %q, true", pw, ok, d.Password)
	}
	d.Append(t, "INBOX", []byte(dovecotTestMessage))

	other := dial(t, d, "sales@example.com", otherPassword, nil)
	sel, err := other.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatalf("select: %v", err)
	}
	if sel.NumMessages != 0 {
		t.Errorf("sales@ INBOX has %d messages, want 0 (mailboxes are per user)", sel.NumMessages)
	}

	c, err := imapclient.DialInsecure(d.Addr, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	err = c.Login(d.User, "wrong-"+d.Password).Wait()
	var imapErr *imap.Error
	if !errors.As(err, &imapErr) || imapErr.Code != imap.ResponseCodeAuthenticationFailed {
		t.Errorf("login with a wrong password: err = %v, want NO [AUTHENTICATIONFAILED]", err)
	}
}

// TestDovecotIdleSeesDelivery checks that IDLE reports a message appended by
// another connection (Dovecot notices Maildir changes through inotify).
func TestDovecotIdleSeesDelivery(t *testing.T) {
	d := StartDovecot(t)
	exists := make(chan uint32, 10)
	c := dial(t, d, d.User, d.Password, &imapclient.Options{
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{
			Mailbox: func(data *imapclient.UnilateralDataMailbox) {
				if data.NumMessages != nil {
					exists <- *data.NumMessages
				}
			},
		},
	})
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatalf("select: %v", err)
	}
	idle, err := c.Idle()
	if err != nil {
		t.Fatalf("idle: %v", err)
	}
	d.Append(t, "INBOX", []byte(dovecotTestMessage))
	select {
	case n := <-exists:
		if n != 1 {
			t.Errorf("EXISTS during IDLE = %d, want 1", n)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("no EXISTS during IDLE within 30s of an APPEND")
	}
	if err := idle.Close(); err != nil {
		t.Fatalf("idle done: %v", err)
	}
	if err := idle.Wait(); err != nil {
		t.Fatalf("idle: %v", err)
	}
}

// TestDovecotRecreatedMailboxUIDValidity records what a watcher must cope with:
// a folder deleted and created again under the same name gets a new
// UIDVALIDITY, and its UIDs start again.
func TestDovecotRecreatedMailboxUIDValidity(t *testing.T) {
	d := StartDovecot(t)
	c := d.Client(t)
	if err := c.Create("Triaged", nil).Wait(); err != nil {
		t.Fatalf("create: %v", err)
	}
	first := appendMessage(t, c, "Triaged", dovecotTestMessage)
	if err := c.Delete("Triaged").Wait(); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := c.Create("Triaged", nil).Wait(); err != nil {
		t.Fatalf("create again: %v", err)
	}
	second := appendMessage(t, c, "Triaged", dovecotTestMessage)
	if second.UIDValidity == first.UIDValidity {
		t.Errorf("UIDVALIDITY %d unchanged after DELETE and CREATE", first.UIDValidity)
	}
	if second.UID != first.UID {
		t.Errorf("first UID after re-create = %d, want %d (UIDs start again)", second.UID, first.UID)
	}
}

func TestDovecotConfig(t *testing.T) {
	d := StartDovecot(t)
	for _, want := range []string{"listen = 127.0.0.1", "protocols = imap", "ssl = no", "maildir:" + d.Dir} {
		conf := readFile(t, d.ConfigPath)
		if !strings.Contains(conf, want) {
			t.Errorf("%s lacks %q", d.ConfigPath, want)
		}
	}
	if !strings.Contains(readFile(t, d.LogPath), "starting up for imap") {
		t.Errorf("%s has no start-up line", d.LogPath)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestDovecotChangeUIDValidity(t *testing.T) {
	d := StartDovecot(t)
	uid := d.Append(t, "INBOX", []byte(dovecotTestMessage))
	c := d.Client(t)
	before, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatalf("select: %v", err)
	}

	got := d.ChangeUIDValidity(t, "INBOX")

	if got != before.UIDValidity+1 {
		t.Errorf("ChangeUIDValidity = %d, want %d", got, before.UIDValidity+1)
	}
	// Dovecot cuts the session that had the mailbox selected.
	if err := c.Noop().Wait(); err == nil {
		t.Errorf("NOOP succeeded on a session whose mailbox changed UIDVALIDITY")
	}
	after, err := d.Client(t).Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatalf("select: %v", err)
	}
	if after.UIDValidity != got {
		t.Errorf("UIDVALIDITY after change = %d, want %d", after.UIDValidity, got)
	}
	msgs := d.Messages(t, "INBOX")
	if len(msgs) != 1 || msgs[0].UID != uid || string(msgs[0].Raw) != dovecotTestMessage {
		t.Errorf("INBOX after UIDVALIDITY change = %+v, want the one message with UID %d", msgs, uid)
	}
}

func TestDovecotDropConnections(t *testing.T) {
	d := StartDovecot(t)
	c := d.Client(t)
	d.DropConnections(t)
	if err := c.Noop().Wait(); err == nil {
		t.Errorf("NOOP succeeded after DropConnections")
	}
	if got := d.Messages(t, "INBOX"); got != nil {
		t.Errorf("Messages(INBOX) = %v on a new connection, want none", got)
	}
}

// stoppingTB records how a test was stopped; Skipf and Fatalf end the
// goroutine like testing's do.
type stoppingTB struct {
	testing.TB
	skipped, fatal string
}

func (s *stoppingTB) Skipf(format string, args ...any) {
	s.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (s *stoppingTB) Fatalf(format string, args ...any) {
	s.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestStartDovecotMissing(t *testing.T) {
	old := dovecotBinary
	dovecotBinary = filepath.Join(t.TempDir(), "no-dovecot")
	t.Cleanup(func() { dovecotBinary = old })
	msg := "dovecot not installed (" + dovecotBinary + " missing): run .ci/dovecot.sh"

	// This skip is staged: keep it out of make test's report of real skips.
	t.Setenv(SkipReportEnv, "")
	for _, tc := range []struct {
		ci   string
		want stoppingTB
	}{
		{ci: "", want: stoppingTB{skipped: msg}},
		{ci: "true", want: stoppingTB{fatal: msg}},
	} {
		t.Setenv("CI", tc.ci)
		got := &stoppingTB{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			StartDovecot(got)
			t.Errorf("CI=%q: StartDovecot returned without Dovecot", tc.ci)
		}()
		<-done
		if diff := cmp.Diff([2]string{tc.want.skipped, tc.want.fatal}, [2]string{got.skipped, got.fatal}); diff != "" {
			t.Errorf("CI=%q: [skipped, fatal] (-want +got):\n%s", tc.ci, diff)
		}
	}
}

// A long test name makes t.TempDir too long for Dovecot's unix sockets;
// StartDovecot then keeps them in a short directory of its own.
func TestDovecotLongTestName(t *testing.T) {
	t.Run("a_subtest_name_long_enough_to_push_unix_socket_paths_past_their_limit", func(t *testing.T) {
		d := StartDovecot(t)
		if got := d.Messages(t, "INBOX"); got != nil {
			t.Errorf("Messages(INBOX) = %v, want none", got)
		}
	})
}

// TestGreetingIsThisDovecot: start-up waits for this instance's greeting,
// not any IMAP greeting: when Dovecot cannot bind its port because another
// server took it, that server's greeting must not pass for Dovecot's.
func TestGreetingIsThisDovecot(t *testing.T) {
	other := StartIMAP(t, IMAPOptions{}) // some other test's server on the port
	if err := greeting(other.Addr, "mailtest dovecot 0123"); err == nil {
		t.Error("another server's greeting accepted as Dovecot's")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "* OK [CAPABILITY IMAP4rev1] mailtest dovecot 0123\r\n")
	}()
	if err := greeting(ln.Addr().String(), "mailtest dovecot 0123"); err != nil {
		t.Errorf("this instance's greeting: %v", err)
	}
}

// The configuration marks "Sent Items" \Sent and "Robocze" \Drafts (RFC
// 6154): once created, LIST ... RETURN (SPECIAL-USE) reports them so;
// before, they are not listed.
func TestDovecotSpecialUse(t *testing.T) {
	d := StartDovecot(t)
	c := d.Client(t)
	roles := func() map[string][]imap.MailboxAttr {
		t.Helper()
		data, err := c.List("", "*", &imap.ListOptions{ReturnSpecialUse: true}).Collect()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]imap.MailboxAttr{}
		for _, m := range data {
			for _, a := range m.Attrs {
				if a == imap.MailboxAttrSent || a == imap.MailboxAttrDrafts {
					out[m.Mailbox] = append(out[m.Mailbox], a)
				}
			}
		}
		return out
	}
	if got := roles(); len(got) != 0 {
		t.Errorf("before the folders exist: %v, want none listed", got)
	}
	for _, name := range []string{"Sent Items", "Robocze", "Sent"} {
		if err := c.Create(name, nil).Wait(); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]imap.MailboxAttr{"Sent Items": {imap.MailboxAttrSent}, "Robocze": {imap.MailboxAttrDrafts}}
	if diff := cmp.Diff(want, roles()); diff != "" {
		t.Errorf("special-use folders (-want +got):\n%s", diff)
	}
}
