package mailtest

// This file starts a real Dovecot IMAP server for integration tests: a
// self-contained configuration in a temporary directory, a loopback listener on
// a free port, and every process running as the current user (root in CI).

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// DovecotBinary is where StartDovecot looks for Dovecot (Debian's dovecot-core).
const DovecotBinary = "/usr/sbin/dovecot"

// dovecotBinary is DovecotBinary; tests of the missing-Dovecot path change it.
var dovecotBinary = DovecotBinary

// doveadm is Dovecot's admin tool, installed with it (dovecot-core).
const doveadm = "/usr/bin/doveadm"

// DovecotUser is the default user every Dovecot started by StartDovecot has.
const DovecotUser = "support@example.com"

// dovecotStartTimeout bounds how long StartDovecot waits for the IMAP greeting.
const dovecotStartTimeout = 10 * time.Second

// Dovecot is a running Dovecot IMAP server on loopback, owned by one test.
// Plain-text LOGIN works without TLS. Mailboxes are Maildir folders under Dir;
// the hierarchy separator is Dovecot's Maildir default, ".".
type Dovecot struct {
	// Addr is the IMAP listener, "127.0.0.1:port". It stays the same across Restart.
	Addr string
	// User and Password log in as the default user, DovecotUser.
	User     string
	Password string
	// Dir is the temporary directory holding the configuration, state and mail.
	Dir string
	// ConfigPath is the generated dovecot.conf.
	ConfigPath string
	// LogPath is Dovecot's log file (all levels); its content is printed when
	// start-up fails.
	LogPath string
	// Version is what `dovecot --version` printed, e.g. "2.3.19.1 (9b53102964)".
	Version string
	// StartupTime is how long the last start took until the IMAP greeting arrived.
	StartupTime time.Duration

	baseDir    string
	passwdPath string
	// greeting is this instance's login_greeting: start waits for it, not
	// for any IMAP greeting on the port (another test's server may have
	// taken the port Dovecot failed to bind).
	greeting  string
	root      bool   // running as root
	loginUser string // runs imap-login
	mailUID   int    // owns the mail and runs imap
	mailGID   int

	introspect string // oauth2 passdb introspection URL; "" without

	mu    sync.Mutex
	users map[string]string // name -> password
	cmd   *exec.Cmd
	done  chan struct{} // closed when cmd has exited
}

// StartDovecot starts Dovecot for the test and stops it at cleanup. When Dovecot
// is not installed the test is skipped, or fails when the CI environment
// variable is set: CI must run the Dovecot tests (install with .ci/dovecot.sh).
func StartDovecot(t testing.TB) *Dovecot {
	t.Helper()
	return startDovecot(t, "")
}

// StartDovecotOAuth2 is StartDovecot with Dovecot's oauth2 passdb: besides
// LOGIN with a password, AUTHENTICATE XOAUTH2 and OAUTHBEARER accept a bearer
// token that the introspection endpoint (RFC 7662, POST) says is active for
// the user (an OAuth2 server started with StartOAuth2).
func StartDovecotOAuth2(t testing.TB, introspectURL string) *Dovecot {
	t.Helper()
	return startDovecot(t, introspectURL)
}

func startDovecot(t testing.TB, introspectURL string) *Dovecot {
	t.Helper()
	if _, err := os.Stat(dovecotBinary); err != nil {
		Skip(t, "dovecot not installed (%s missing): run .ci/dovecot.sh", dovecotBinary)
	}
	out, err := exec.Command(dovecotBinary, "--version").Output()
	if err != nil {
		t.Fatalf("mailtest: dovecot --version: %v", err)
	}
	version := strings.TrimSpace(string(out))
	if !strings.HasPrefix(version, "2.3.") {
		t.Fatalf("mailtest: dovecot %s is installed, but StartDovecot writes configuration for Dovecot 2.3 only", version)
	}

	cur, err := user.Current()
	if err != nil {
		t.Fatalf("mailtest: current user: %v", err)
	}
	grp, err := user.LookupGroupId(cur.Gid)
	if err != nil {
		t.Fatalf("mailtest: current group %s: %v", cur.Gid, err)
	}
	uid, _ := strconv.Atoi(cur.Uid)
	gid, _ := strconv.Atoi(cur.Gid)
	// Dovecot refuses to run login processes and mail access as root. Under
	// root, imap-login runs chrooted as dovenull and imap as dovecot (both
	// created by Debian's dovecot-core), or as nobody.
	loginUser, mailUID, mailGID := cur.Username, uid, gid
	if uid == 0 {
		login, err := lookupUser("dovenull", "nobody")
		if err != nil {
			t.Fatalf("mailtest: dovecot login user: %v", err)
		}
		mail, err := lookupUser("dovecot", "nobody")
		if err != nil {
			t.Fatalf("mailtest: dovecot mail user: %v", err)
		}
		loginUser = login.Username
		mailUID, _ = strconv.Atoi(mail.Uid)
		mailGID, _ = strconv.Atoi(mail.Gid)
	}

	dir := t.TempDir()
	// Unix sockets live in base_dir and their paths are limited to 108 bytes;
	// test names can make t.TempDir long, so fall back to a short directory.
	baseDir := filepath.Join(dir, "run")
	if len(baseDir) > 60 {
		short, err := os.MkdirTemp("", "dovecot")
		if err != nil {
			t.Fatalf("mailtest: %v", err)
		}
		t.Cleanup(func() { os.RemoveAll(short) })
		baseDir = filepath.Join(short, "run")
	}

	d := &Dovecot{
		User:       DovecotUser,
		Password:   randomPassword(t),
		Dir:        dir,
		ConfigPath: filepath.Join(dir, "dovecot.conf"),
		LogPath:    filepath.Join(dir, "dovecot.log"),
		Version:    version,
		baseDir:    baseDir,
		passwdPath: filepath.Join(dir, "passwd"),
		greeting:   "mailtest dovecot " + randomPassword(t),
		root:       uid == 0,
		loginUser:  loginUser,
		mailUID:    mailUID,
		mailGID:    mailGID,
		users:      map[string]string{},
		introspect: introspectURL,
	}
	if err := d.makeMailDirs(); err != nil {
		t.Fatalf("mailtest: %v", err)
	}
	d.mu.Lock()
	d.users[d.User] = d.Password
	err = d.writePasswdLocked()
	d.mu.Unlock()
	if err != nil {
		t.Fatalf("mailtest: %v", err)
	}
	// The test is over at cleanup: kill at once. A graceful stop (Stop,
	// Restart) costs Dovecot's master about a second.
	t.Cleanup(func() { d.stop(false) })

	// The free port is found by binding :0 and closing it, so another process
	// may take it before Dovecot binds: retry with a fresh port then.
	for attempt := 1; ; attempt++ {
		port := freePort(t)
		d.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err := d.writeConfig(cur.Username, grp.Name, port); err != nil {
			t.Fatalf("mailtest: %v", err)
		}
		err := d.start()
		if err == nil {
			break
		}
		if attempt < 5 && errors.Is(err, errAddrInUse) {
			continue
		}
		t.Fatalf("mailtest: start dovecot: %v\n--- %s ---\n%s", err, d.LogPath, d.readLog())
	}
	t.Logf("mailtest: dovecot %s listening on %s (started in %v)", d.Version, d.Addr, d.StartupTime.Round(time.Millisecond))
	return d
}

// AddUser adds a user with a random password and returns the password. Dovecot
// re-reads its passwd-file when it changes, so no restart is needed. Adding an
// existing user returns its password.
func (d *Dovecot) AddUser(t testing.TB, name string) string {
	t.Helper()
	if strings.ContainsAny(name, ":\n/") || name == "" {
		t.Fatalf("mailtest: bad dovecot user name %q", name)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if pw, ok := d.users[name]; ok {
		return pw
	}
	d.users[name] = randomPassword(t)
	if err := d.writePasswdLocked(); err != nil {
		t.Fatalf("mailtest: %v", err)
	}
	return d.users[name]
}

// UserPassword returns the password of a user added with AddUser (or the
// default user), and false for an unknown user.
func (d *Dovecot) UserPassword(name string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	pw, ok := d.users[name]
	return pw, ok
}

// MailDir is the Maildir root of a user (INBOX; other folders are ".Name"
// subdirectories).
func (d *Dovecot) MailDir(name string) string {
	return filepath.Join(d.Dir, "mail", name)
}

// Restart stops Dovecot (clients are disconnected) and starts it again on the
// same address with the same mail, like a server restart.
func (d *Dovecot) Restart(t testing.TB) {
	t.Helper()
	d.stop(true)
	if err := d.start(); err != nil {
		t.Fatalf("mailtest: restart dovecot: %v\n--- %s ---\n%s", err, d.LogPath, d.readLog())
	}
}

// Stop stops Dovecot before the test ends, e.g. to test a server that is down;
// Restart starts it again. Stopping a stopped server does nothing.
func (d *Dovecot) Stop(t testing.TB) {
	t.Helper()
	d.stop(true)
}

// Client dials Dovecot and logs in as the default user. The connection is
// logged out and closed at cleanup.
func (d *Dovecot) Client(t testing.TB) *imapclient.Client {
	t.Helper()
	return d.ClientAs(t, d.User)
}

// ClientAs is Client for a user added with AddUser (or the default user).
func (d *Dovecot) ClientAs(t testing.TB, user string) *imapclient.Client {
	t.Helper()
	c := d.dialAs(t, user)
	// Close, not LOGOUT: a command cut short by t.Fatal may hold the client's
	// write lock, and LOGOUT would wait for it forever.
	t.Cleanup(func() { c.Close() })
	return c
}

func (d *Dovecot) dialAs(t testing.TB, user string) *imapclient.Client {
	t.Helper()
	pw, ok := d.UserPassword(user)
	if !ok {
		t.Fatalf("mailtest: unknown dovecot user %q", user)
	}
	c, err := imapclient.DialInsecure(d.Addr, nil)
	if err != nil {
		t.Fatalf("mailtest: dial dovecot: %v", err)
	}
	if err := c.Login(user, pw).Wait(); err != nil {
		c.Close()
		d.fatalf(t, "dovecot login %s: %v", user, err)
	}
	return c
}

// Append stores a raw RFC 5322 message in the default user's mailbox (over
// IMAP, as a delivery would) and returns its UID.
func (d *Dovecot) Append(t testing.TB, mailbox string, raw []byte, flags ...imap.Flag) imap.UID {
	t.Helper()
	return d.AppendAs(t, d.User, mailbox, raw, flags...)
}

// AppendAs is Append for a user added with AddUser (or the default user),
// on a connection of its own that it closes (many deliveries stay under
// Dovecot's connection limit per user).
func (d *Dovecot) AppendAs(t testing.TB, user, mailbox string, raw []byte, flags ...imap.Flag) imap.UID {
	t.Helper()
	c := d.dialAs(t, user)
	defer c.Close()
	cmd := c.Append(mailbox, int64(len(raw)), &imap.AppendOptions{Flags: flags})
	if _, err := cmd.Write(raw); err != nil {
		d.fatalf(t, "append to %s: %v", mailbox, err)
	}
	if err := cmd.Close(); err != nil {
		d.fatalf(t, "append to %s: %v", mailbox, err)
	}
	data, err := cmd.Wait()
	if err != nil {
		d.fatalf(t, "append to %s: %v", mailbox, err)
	}
	return data.UID
}

// Messages returns every message of the default user's mailbox, read with a
// fresh client (nil for a missing mailbox).
func (d *Dovecot) Messages(t testing.TB, mailbox string) []Message {
	t.Helper()
	return ReadMailbox(t, d.Client(t), mailbox)
}

// ChangeUIDValidity gives the default user's mailbox a new, higher
// UIDVALIDITY (doveadm mailbox update), as a server that rebuilt its indexes
// would. Dovecot disconnects sessions that have the mailbox selected ("IMAP
// session state is inconsistent, please relogin").
func (d *Dovecot) ChangeUIDValidity(t testing.TB, mailbox string) uint32 {
	t.Helper()
	out := d.doveadm(t, "mailbox", "status", "-u", d.User, "uidvalidity", mailbox)
	// The output is "<mailbox> uidvalidity=N".
	var v uint64
	err := errors.New("no uidvalidity field")
	for _, f := range strings.Fields(out) {
		if n, ok := strings.CutPrefix(f, "uidvalidity="); ok {
			v, err = strconv.ParseUint(n, 10, 32)
		}
	}
	if err != nil {
		d.fatalf(t, "doveadm mailbox status: unexpected output %q", out)
	}
	next := uint32(v) + 1
	d.doveadm(t, "mailbox", "update", "-u", d.User, "--uid-validity", strconv.FormatUint(uint64(next), 10), mailbox)
	return next
}

// DropConnections disconnects every IMAP session of the default user
// (doveadm kick), as a server-side timeout or an admin would, and returns
// once their processes have exited, i.e. the connections are closed.
func (d *Dovecot) DropConnections(t testing.TB) {
	t.Helper()
	// doveadm kick only asks the session processes to stop (SIGTERM) and
	// returns: a command sent right after it could still be answered.
	var pids []int
	for _, line := range strings.Split(d.doveadm(t, "who", "-1", d.User), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == d.User {
			if pid, err := strconv.Atoi(f[2]); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	d.doveadm(t, "kick", d.User)
	deadline := time.Now().Add(30 * time.Second) // a hang guard only
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				d.fatalf(t, "kicked imap process %d still running after 30s", pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func (d *Dovecot) doveadm(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command(doveadm, append([]string{"-c", d.ConfigPath}, args...)...).CombinedOutput()
	if err != nil {
		d.fatalf(t, "doveadm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

var errAddrInUse = errors.New("address already in use")

// start runs dovecot in the foreground and waits for the IMAP greeting.
func (d *Dovecot) start() error {
	began := time.Now()
	out, err := os.OpenFile(filepath.Join(d.Dir, "dovecot.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.Command(dovecotBinary, "-F", "-c", d.ConfigPath)
	cmd.Stdout = out
	cmd.Stderr = out
	// Own process group, so that SIGKILL reaches every child; and killed with
	// the test binary, should it die (e.g. on -timeout) before cleanup.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	d.mu.Lock()
	d.cmd, d.done = cmd, done
	d.mu.Unlock()

	deadline := time.Now().Add(dovecotStartTimeout)
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-done:
			d.mu.Lock()
			d.cmd, d.done = nil, nil
			d.mu.Unlock()
			if strings.Contains(d.readLog(), "Address already in use") {
				return fmt.Errorf("dovecot exited: %s: %w", cmd.ProcessState, errAddrInUse)
			}
			return fmt.Errorf("dovecot exited during start-up: %s", cmd.ProcessState)
		default:
		}
		if lastErr = greeting(d.Addr, d.greeting); lastErr == nil {
			d.StartupTime = time.Since(began)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	d.stop(false)
	return fmt.Errorf("no IMAP greeting on %s within %v: %v", d.Addr, dovecotStartTimeout, lastErr)
}

// greeting dials addr and reads the untagged OK greeting, which must end
// with want.
func greeting(addr, want string) error {
	conn, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "* OK") || !strings.HasSuffix(strings.TrimRight(line, "\r\n"), want) {
		return fmt.Errorf("unexpected greeting %q", line)
	}
	return nil
}

// stop sends SIGTERM and waits, or when not graceful (or Dovecot lingers)
// kills the whole process group.
func (d *Dovecot) stop(graceful bool) {
	d.mu.Lock()
	cmd, done := d.cmd, d.done
	d.cmd, d.done = nil, nil
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	pgid := cmd.Process.Pid
	if graceful {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
	}
	// Also reaches children that outlive a graceful master exit.
	syscall.Kill(-pgid, syscall.SIGKILL)
	<-done
}

// fatalf fails the test with Dovecot's log appended.
func (d *Dovecot) fatalf(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Fatalf("mailtest: %s\n--- %s ---\n%s", fmt.Sprintf(format, args...), d.LogPath, d.readLog())
}

func (d *Dovecot) readLog() string {
	var b bytes.Buffer
	for _, p := range []string{filepath.Join(d.Dir, "dovecot.out"), d.LogPath} {
		if data, err := os.ReadFile(p); err == nil {
			b.Write(data)
		}
	}
	return b.String()
}

// writePasswdLocked rewrites the passwd-file atomically (Dovecot may read it
// at any time). Every user has its own home; mail_uid/mail_gid make every
// mail process run as the current user.
func (d *Dovecot) writePasswdLocked() error {
	var b strings.Builder
	for name, pw := range d.users {
		// user:{PLAIN}password:uid:gid:gecos:home:shell:extra. The uid and
		// gid come from mail_uid/mail_gid: passwd-file rejects uid 0.
		fmt.Fprintf(&b, "%s:{PLAIN}%s:::%s::\n", name, pw, filepath.Join(d.Dir, "home", name))
	}
	tmp := d.passwdPath + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, d.passwdPath)
}

// makeMailDirs creates the roots of the users' mail and homes, owned by the
// mail user. Under root that user is not root, so it must also be able to pass
// through t.TempDir and its parent, which testing creates with mode 0700.
func (d *Dovecot) makeMailDirs() error {
	for _, name := range []string{"mail", "home"} {
		p := filepath.Join(d.Dir, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			return err
		}
		if d.root {
			if err := os.Chown(p, d.mailUID, d.mailGID); err != nil {
				return err
			}
		}
	}
	if d.root {
		for _, p := range []string{d.Dir, filepath.Dir(d.Dir)} {
			if err := os.Chmod(p, 0o711); err != nil {
				return err
			}
		}
	}
	return nil
}

// lookupUser returns the first of names that exists.
func lookupUser(names ...string) (*user.User, error) {
	var errs []error
	for _, name := range names {
		u, err := user.Lookup(name)
		if err == nil {
			return u, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mailtest: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func randomPassword(t testing.TB) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("mailtest: %v", err)
	}
	return hex.EncodeToString(b)
}
