package e2e

// These tests run the real triage binary (built once per test run) against
// in-process IMAP and SMTP servers, with the offline model, a local warranty
// CSV and a local tickets database: end to end through the real pipeline,
// and the crash-consistency test (SIGKILL at random moments).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage/internal/ledger"
	"triage/internal/testkit/mailtest"
	"triage/internal/testkit/pgtest"
	"triage/internal/watch"
)

// configTail ends the configuration of every test that runs the binary: no
// reply limits, JSON logs, and the offline pipeline on the test's files.
const configTail = `limits:
  per_sender: -1
  global_per_hour: -1
log:
  format: json
  level: info
pipeline:
  from: "Serwis <serwis@example.com>"
  offline: true
  warranty_csv: warranty.csv
  tickets_db: tickets.db
`

// build is a triage binary built once for the whole test binary.
type build struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// goBuild is ./cmd/triage as go build links it (every language model),
// makeBuild as make build does (the models triage reads, stored).
var goBuild, makeBuild build

// triageBinary builds ./cmd/triage once for the whole test binary.
func triageBinary(t testing.TB) string {
	t.Helper()
	return goBuild.binary(t, "go build ./cmd/triage", func(path string) *exec.Cmd {
		return exec.Command("go", "build", "-o", path, "../cmd/triage")
	})
}

// binary runs the build cmd makes, once, into a binary in a new temporary
// directory and returns its path, or fails t with what the build (what)
// said.
func (b *build) binary(t testing.TB, what string, cmd func(path string) *exec.Cmd) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "triage-bin")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "triage")
		b.out, b.err = cmd(b.path).CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("%s: %v\n%s", what, b.err, b.out)
	}
	return b.path
}

// shippedBinary builds the binary `make build` links (lingua-go with only
// the language models triage reads, stored uncompressed) once for the
// whole test binary: what the benchmarks of a run's speed measure, as it
// is what an installation runs.
func shippedBinary(t testing.TB) string {
	t.Helper()
	return makeBuild.binary(t, "make build", func(path string) *exec.Cmd {
		cmd := exec.Command("make", "build", "BIN="+path)
		cmd.Dir = ".."
		return cmd
	})
}

func TestMain(m *testing.M) {
	code := pgtest.Main(m) // the tests with several daemons use PostgreSQL
	for _, p := range []string{goBuild.path, makeBuild.path} {
		if p != "" {
			os.RemoveAll(filepath.Dir(p))
		}
	}
	os.Exit(code)
}

// world is the binary's environment: servers, config file, ledger.
type world struct {
	t      testing.TB
	tgt    mailtest.Target
	sink   *mailtest.SMTPSink
	dir    string
	config string
	ledger string
	store  string // a postgres:// URL holding the ledger and tickets ("": the SQLite files)
	prefix string // tells this inbox's test messages from another's
	log    *bytes.Buffer
	logMu  sync.Mutex
}

const warrantyCSV = `serial_number,status,expiration_date,product
SN-48213-PL,valid,2099-05-31,Ekspres do kawy Aroma 5000
SN98765,expired,2024-06-15,Zmywarka CleanLine 60
`

// newWorld uses the in-memory IMAP server.
func newWorld(t testing.TB, extra string) *world {
	return newWorldFor(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target(), extra)
}

func newWorldFor(t testing.TB, tgt mailtest.Target, extra string) *world {
	t.Helper()
	w := &world{t: t, dir: t.TempDir(), log: &bytes.Buffer{}, tgt: tgt}
	w.sink = mailtest.StartSMTPSink(t, mailtest.SMTPOptions{User: "relay", Password: "relaypw"})
	w.ledger = filepath.Join(w.dir, "ledger.db")
	if err := os.WriteFile(filepath.Join(w.dir, "warranty.csv"), []byte(warrantyCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "smtp.pass"), []byte("relaypw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`imap:
  addr: %s
  tls: none
  user: %s
  sent_folder: Sent
smtp:
  addr: %s
  tls: none
  user: relay
  password_file: smtp.pass
ledger: ledger.db
interval: 50ms
`+configTail+`%s`, w.tgt.Addr, w.tgt.User, w.sink.Addr, extra)
	w.config = filepath.Join(w.dir, "triage.yaml")
	if err := os.WriteFile(w.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	tgt.CreateFolder(t, "Sent") // sent_folder names it: it must exist
	return w
}

// online lets the pipeline ask a model instead of the built-in offline
// one (its configuration says offline: true): for a Gemini stand-in the
// caller names in the binary's environment.
func (w *world) online() {
	w.t.Helper()
	cfg, err := os.ReadFile(w.config)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(w.config, bytes.Replace(cfg, []byte("offline: true"), []byte("offline: false"), 1), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// command prepares the binary with a clean environment (no Gemini key).
func (w *world) command(args ...string) *exec.Cmd {
	return w.commandOf(triageBinary(w.t), args...)
}

// commandOf is command running the triage binary bin.
func (w *world) commandOf(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.dir, "TRIAGE_IMAP_PASSWORD=" + w.tgt.Password}
	cmd.Dir = w.dir
	// Killed with the test binary, should it die (e.g. on -timeout).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdout = &lockedWriter{w: w}
	cmd.Stderr = &lockedWriter{w: w}
	return cmd
}

// run runs the binary to the end.
func (w *world) run(args ...string) (int, string) {
	w.t.Helper()
	cmd := w.command(args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		w.t.Fatalf("run %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

type lockedWriter struct{ w *world }

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.w.logMu.Lock()
	defer l.w.logMu.Unlock()
	return l.w.log.Write(p)
}

func (w *world) logs() string {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	return w.log.String()
}

// inbound is one customer message of the test.
type inbound struct {
	ID      string
	Subject string
	Body    string
}

var bodies = []string{
	"Dzień dobry,\r\nmój ekspres do kawy przestał grzać wodę. Numer seryjny: SN-48213-PL.\r\nProszę o pomoc.\r\nAnna",
	"Dzień dobry,\r\nzmywarka nie działa, numer seryjny SN98765.\r\nPozdrawiam",
	"Hello,\r\nmy kettle broke, serial number SN00000-XX.\r\nThanks",
	"Dzień dobry,\r\nczajnik przecieka. Nie mam numeru seryjnego.\r\nPozdrawiam",
}

func (w *world) deliver(n int) inbound {
	id := fmt.Sprintf("<crash-%s%d@customer.example>", w.prefix, n)
	subj := fmt.Sprintf("Reklamacja %d", n)
	raw := fmt.Sprintf("From: Klient %d <klient%d@customer.example>\r\nTo: serwis@example.com\r\nSubject: %s\r\nMessage-ID: %s\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n%s\r\n",
		n, n, subj, id, bodies[n%len(bodies)])
	w.tgt.Append(w.t, "INBOX", []byte(raw))
	return inbound{ID: id, Subject: subj, Body: bodies[n%len(bodies)]}
}

// tally checks every inbound message: answered exactly once, or handed to a
// person (in the failed folder); nothing twice, nothing lost.
type tally struct {
	Messages, Replied, Human, Skipped, Duplicates, Lost int
	// HumanAnswered counts messages handed to a person whose reply did go
	// out once (killed after SMTP accepted it, before the ledger said so).
	HumanAnswered int
}

func (w *world) tally(msgs []inbound) (tally, []string) {
	w.t.Helper()
	replies := w.sink.CountByHeader("In-Reply-To")
	inHuman := w.handedToPerson()
	inInbox := map[string]mailtest.Message{}
	for _, m := range w.folder("INBOX") {
		inInbox[headerOf(m.Raw, "Message-ID")] = m
	}
	state := map[string]ledger.State{}
	for _, e := range w.ledgerEntries() {
		state[e.MessageID] = e.State
	}
	var tl tally
	var problems []string
	for _, m := range msgs {
		tl.Messages++
		n := replies[m.ID]
		switch {
		case n > 1:
			tl.Duplicates++
			problems = append(problems, fmt.Sprintf("%s answered %d times", m.ID, n))
		case inHuman[m.ID]:
			tl.Human++
			if n == 1 {
				tl.HumanAnswered++
			}
		case n == 1:
			tl.Replied++
		case state[m.ID] == ledger.StateSkipped && inInbox[m.ID].HasFlag(watch.DefaultKeyword):
			tl.Skipped++
		default:
			tl.Lost++
			problems = append(problems, fmt.Sprintf("%s lost: %d replies, ledger state %q, in INBOX %v", m.ID, n, state[m.ID], inInbox[m.ID].Flags))
		}
	}
	return tl, problems
}

func (w *world) folder(name string) []mailtest.Message {
	return mailtest.ReadMailbox(w.t, w.tgt.Client(w.t), name)
}

func headerOf(raw []byte, name string) string {
	for _, line := range strings.Split(string(raw), "\r\n") {
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func TestBinaryEndToEnd(t *testing.T) {
	binaryEndToEnd(t, newWorld(t, ""))
}

// binaryEndToEnd: the real binary through the real pipeline answers new mail
// once, a rerun answers nothing, triage ledger lists it, an overlapping run
// loses the lock, the daemon serves metrics and stops on SIGTERM.
func binaryEndToEnd(t *testing.T, w *world) {
	var msgs []inbound
	for i := range 8 {
		msgs = append(msgs, w.deliver(i))
	}
	code, out := w.run("watch", "--config", w.config, "--once")
	if code != 0 {
		t.Fatalf("watch --once: exit %d\n%s", code, out)
	}
	tl, problems := w.tally(msgs)
	t.Logf("end to end: %+v", tl)
	if len(problems) > 0 || tl.Replied == 0 {
		t.Errorf("problems: %v (tally %+v)\n%s", problems, tl, out)
	}
	sent := len(w.sink.Messages())
	if n := len(w.folder("Sent")); n != sent {
		t.Errorf("Sent folder has %d messages, SMTP accepted %d", n, sent)
	}

	// A rerun answers nothing.
	if code, out := w.run("watch", "--config", w.config, "--once"); code != 0 {
		t.Fatalf("second watch --once: exit %d\n%s", code, out)
	}
	if got := len(w.sink.Messages()); got != sent {
		t.Errorf("rerun sent %d more replies", got-sent)
	}

	// triage ledger shows every message.
	code, out = w.run("ledger", "--config", w.config, "--json")
	if code != 0 || strings.Count(out, "\n") != len(msgs) {
		t.Errorf("triage ledger --json: exit %d, %d lines, want %d:\n%s", code, strings.Count(out, "\n"), len(msgs), out)
	}

	code, out = w.run("ledger", "--config", w.config)
	if code != 0 || !strings.Contains(out, "STATE") || !strings.Contains(out, fmt.Sprintf("all messages: replied=%d", tl.Replied)) {
		t.Errorf("triage ledger: exit %d:\n%s", code, out)
	}

	// Overlapping runs: a daemon holds the lock; --once loses, clearly.
	// The daemon picks its metrics port itself (a port found free here
	// could be taken by another process before the daemon binds it).
	daemon := w.command("watch", "--config", w.config, "--metrics-addr", "127.0.0.1:0")
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Process.Kill() }) // after a failure; a no-op after Wait
	metricsAddr := w.waitLogAttr("metrics", "addr")
	for !healthy(metricsAddr) { // the daemon holds the lock and is connected
		time.Sleep(20 * time.Millisecond)
	}
	late := w.deliver(100)
	w.sink.WaitFor(t, func() bool { return w.sink.CountByHeader("In-Reply-To")[late.ID] == 1 })
	// The reply is out; the ledger and metrics follow right after.
	for path, want := range map[string]string{
		"/healthz": "ok",
		"/metrics": `triage_messages_final_total{state="replied"} 1`,
	} {
		for {
			resp, err := http.Get("http://" + metricsAddr + path)
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), want) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// SIGTERM stops the daemon cleanly.
	daemon.Process.Signal(syscall.SIGTERM)
	if err := daemon.Wait(); err != nil {
		t.Errorf("daemon after SIGTERM: %v\n%s", err, w.logs())
	}
}

func healthy(addr string) bool {
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestCrashConsistency kills the real binary with SIGKILL at random moments
// while it works through many messages, restarts it each time, and checks
// that every message was answered exactly once or handed to a person. It
// runs at each concurrency in $TRIAGE_CRASH_CONCURRENCY (default 4, the
// watcher's default; e.g. TRIAGE_CRASH_CONCURRENCY=1,4,8).
func TestCrashConsistency(t *testing.T) {
	for _, n := range crashConcurrencies(t) {
		t.Run(fmt.Sprintf("concurrency=%d", n), func(t *testing.T) {
			crashConsistency(t, newWorld(t, fmt.Sprintf("concurrency: %d\n", n)), 60, 80)
		})
	}
}

func crashConcurrencies(t *testing.T) []int {
	v := os.Getenv("TRIAGE_CRASH_CONCURRENCY")
	if v == "" {
		return []int{4}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &n); err != nil || n < 1 {
			t.Fatalf("TRIAGE_CRASH_CONCURRENCY=%q: want a comma-separated list of numbers >= 1", v)
		}
		out = append(out, n)
	}
	return out
}

func crashConsistency(t *testing.T, w *world, wantKills, messages int) {
	const maxLifetime = 400 * time.Millisecond
	rng, seed := crashRand(t, "crash test")

	var msgs []inbound
	for i := range messages / 2 {
		msgs = append(msgs, w.deliver(i))
	}
	start := time.Now()
	kills, restarts := 0, 0
	for kills < wantKills {
		if kills == wantKills/3 { // more mail arrives while it keeps crashing
			for i := messages / 2; i < messages; i++ {
				msgs = append(msgs, w.deliver(i))
			}
		}
		restarts++
		if killed, err := w.runKilled(rng, maxLifetime); killed {
			kills++
		} else {
			t.Fatalf("run %d ended before the kill (%v):\n%s", restarts, err, tail(w.logs(), 3000))
		}
	}
	// A last, undisturbed pass finishes whatever is left.
	w.finalOnce()
	tl, problems := w.tally(msgs)
	t.Logf("crash consistency (%s): kills=%d messages=%d replied_once=%d handed_to_person=%d (of which already answered once: %d) skipped=%d duplicates=%d lost=%d smtp_accepted=%d (%v, seed %d)",
		t.Name(), kills, tl.Messages, tl.Replied, tl.Human, tl.HumanAnswered, tl.Skipped, tl.Duplicates, tl.Lost, len(w.sink.Messages()), time.Since(start).Round(time.Millisecond), seed)
	if diff := cmp.Diff(0, tl.Duplicates+tl.Lost); diff != "" || len(problems) > 0 {
		sort.Strings(problems)
		t.Errorf("not exactly once: %v", problems)
	}
	if tl.Replied == 0 {
		t.Errorf("no message was answered; logs:\n%s", tail(w.logs(), 3000))
	}
}

// crashRand is the random source of a crash test, seeded from
// TRIAGE_CRASH_SEED or the clock; the seed is logged so a run can be repeated.
func crashRand(t *testing.T, what string) (*rand.Rand, uint64) {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TRIAGE_CRASH_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("%s seed %d (rerun with TRIAGE_CRASH_SEED=%d)", what, seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), seed
}

// runKilled starts watch, SIGKILLs it after a random time below maxLifetime
// and reports whether the kill ended it (else the run's own end, err).
func (w *world) runKilled(rng *rand.Rand, maxLifetime time.Duration) (killed bool, err error) {
	w.t.Helper()
	cmd := w.command("watch", "--config", w.config)
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	time.Sleep(time.Duration(rng.Int64N(int64(maxLifetime))))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		w.t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled(), err
}

// finalOnce is the last, undisturbed watch --once after a crash test. Exit
// status 1 says messages of the pass failed (crashes use up attempts); the
// tests account for those in the failed folder.
func (w *world) finalOnce() {
	w.t.Helper()
	err := w.command("watch", "--config", w.config, "--once").Run()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		w.t.Fatalf("final watch --once: %v\n%s", err, tail(w.logs(), 3000))
	}
}

// handedToPerson is the Message-IDs in the failed folder.
func (w *world) handedToPerson() map[string]bool {
	w.t.Helper()
	ids := map[string]bool{}
	for _, m := range w.folder(watch.DefaultFailedFolder) {
		ids[headerOf(m.Raw, "Message-ID")] = true
	}
	return ids
}

// ledgerEntries is every entry of the ledger, newest first.
func (w *world) ledgerEntries() []ledger.Entry {
	w.t.Helper()
	path := w.ledger
	if w.store != "" {
		path = w.store
	}
	led, err := ledger.Open(context.Background(), ledger.Config{Path: path})
	if err != nil {
		w.t.Fatal(err)
	}
	defer led.Close()
	es, err := led.Recent(context.Background(), 100000, "")
	if err != nil {
		w.t.Fatal(err)
	}
	return es
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// waitLogAttr waits until the binary logs a JSON line with message msg and
// returns its attribute key.
func (w *world) waitLogAttr(msg, key string) string {
	w.t.Helper()
	for {
		for _, line := range strings.Split(w.logs(), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != msg {
				continue
			}
			if v, ok := rec[key].(string); ok {
				return v
			}
			w.t.Fatalf("log line %s has no string attribute %q", line, key)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLog waits until the binary's output contains s.
func (w *world) waitLog(s string) {
	w.t.Helper()
	for !strings.Contains(w.logs(), s) {
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBinaryShutdown: SIGTERM while a message is in flight lets it run for
// the grace period, then abandons it (nothing sent) and exits 0; the next run
// answers it. A second signal exits at once.
func TestBinaryShutdown(t *testing.T) {
	w := newWorld(t, "")
	m := w.deliver(0)
	hang := []string{"watch", "--config", w.config, "--log-level", "debug", "--offline-faults", "hang", "--turn-timeout", "1h"}

	cmd := w.command(append(hang, "--shutdown-grace", "200ms")...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.waitLog(`"msg":"message body"`) // processing has begun; the model hangs
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v\n%s", err, tail(w.logs(), 3000))
	}
	if !strings.Contains(w.logs(), "message abandoned at shutdown") {
		t.Errorf("no abandonment logged:\n%s", tail(w.logs(), 3000))
	}
	if n := len(w.sink.Messages()); n != 0 {
		t.Fatalf("sent %d replies during the aborted run", n)
	}

	// Second signal: exit now, even with an hour of grace left.
	w.logMu.Lock()
	w.log.Reset()
	w.logMu.Unlock()
	cmd = w.command(append(hang, "--shutdown-grace", "1h")...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.waitLog(`"msg":"message body"`)
	cmd.Process.Signal(syscall.SIGTERM)
	w.waitLog("Signal again to exit now")
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("after a second signal: %v (exit %d), want exit 130\n%s", err, code, tail(w.logs(), 3000))
	}

	// The next run answers the message, once.
	if err := w.command("watch", "--config", w.config, "--once").Run(); err != nil {
		t.Fatalf("watch --once: %v\n%s", err, tail(w.logs(), 3000))
	}
	tl, problems := w.tally([]inbound{m})
	if tl.Replied != 1 || len(problems) > 0 {
		t.Errorf("after restart: %+v %v\n%s", tl, problems, tail(w.logs(), 3000))
	}
}
