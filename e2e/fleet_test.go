package e2e

// Several real triage watch daemons on one PostgreSQL store, serving two
// inboxes (inboxes:), while one of them after another is SIGKILLed and
// restarted: every message answered exactly once or left for a person,
// and the tickets consistent.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"triage"
	"triage/internal/dispatcher"
	"triage/internal/ledger"
	"triage/internal/store"
	"triage/internal/testkit/mailtest"
	"triage/internal/testkit/pgtest"
)

// fleet is several daemons sharing one store, serving the inboxes (one
// world each; the first runs the commands and collects the logs).
type fleet struct {
	t       testing.TB
	inboxes []*world
	store   string
	daemons []*exec.Cmd
	env     []string // added to every daemon's environment
	bin     string   // the triage binary the daemons run ("": this tree's)
}

// newFleet writes one configuration serving every target as an inbox of
// its own, on a fresh PostgreSQL database.
func newFleet(t testing.TB, targets []mailtest.Target, extra string) *fleet {
	t.Helper()
	url := pgtest.URL(t)
	first := newWorldFor(t, targets[0], "")
	f := &fleet{t: t, store: url}
	var inboxes strings.Builder
	for i, tgt := range targets {
		w := first
		if i > 0 {
			w = &world{t: t, tgt: tgt, sink: first.sink, dir: first.dir, config: first.config, log: first.log}
		}
		w.store, w.prefix = url, fmt.Sprintf("%c", 'a'+i)
		if i > 0 {
			tgt.CreateFolder(t, "Sent") // sent_folder names it: it must exist
		}
		pass := filepath.Join(w.dir, w.prefix+".pass")
		if err := os.WriteFile(pass, []byte(tgt.Password+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&inboxes, "  - name: %s\n    imap: {addr: %s, tls: none, user: %s, password_file: %s, sent_folder: Sent}\n", w.prefix, tgt.Addr, tgt.User, pass)
		f.inboxes = append(f.inboxes, w)
	}
	cfg := fmt.Sprintf(`store: %s
lease: 2s
interval: 50ms
smtp:
  addr: %s
  tls: none
  user: relay
  password_file: smtp.pass
ledger: ledger.db
`+configTail+`inboxes:
%s%s`, url, first.sink.Addr, inboxes.String(), extra)
	if err := os.WriteFile(first.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, d := range f.daemons {
			if d != nil && d.ProcessState == nil {
				d.Process.Kill()
				d.Wait()
			}
		}
	})
	return f
}

// start starts daemon i (again).
func (f *fleet) start(i int) {
	f.t.Helper()
	for len(f.daemons) <= i {
		f.daemons = append(f.daemons, nil)
	}
	bin := f.bin
	if bin == "" {
		bin = triageBinary(f.t)
	}
	cmd := f.inboxes[0].commandOf(bin, "watch", "--config", f.inboxes[0].config)
	cmd.Env = append(cmd.Env, f.env...)
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.daemons[i] = cmd
}

// kill SIGKILLs daemon i and reports whether the kill ended it.
func (f *fleet) kill(i int) bool {
	f.t.Helper()
	d := f.daemons[i]
	if err := d.Process.Signal(syscall.SIGKILL); err != nil {
		f.t.Fatal(err)
	}
	err := d.Wait()
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled()
}

// stop asks every daemon to stop (SIGTERM) and waits for it. A daemon
// started a moment before may not handle signals yet: SIGTERM then ends it
// before it did anything, which is as good.
func (f *fleet) stop() {
	f.t.Helper()
	for _, d := range f.daemons {
		d.Process.Signal(syscall.SIGTERM)
	}
	for i, d := range f.daemons {
		err := d.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled() && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGTERM {
			continue
		}
		if err != nil {
			var last []string
			for _, line := range strings.Split(f.inboxes[0].logs(), "\n") {
				if strings.Contains(line, `"triage watch stopped"`) || strings.Contains(line, `"level":"ERROR"`) || strings.HasPrefix(line, "triage: ") {
					last = append(last, line)
				}
			}
			f.t.Errorf("daemon %d after SIGTERM: %v; errors logged:\n%s", i, err, strings.Join(last, "\n"))
		}
	}
}

// unsettled counts the messages with no final, settled ledger entry.
func (f *fleet) unsettled(msgs []inbound) int {
	done := map[string]bool{}
	for _, e := range f.inboxes[0].ledgerEntries() {
		if e.State.Terminal() && e.IMAPDone {
			done[e.MessageID] = true
		}
	}
	n := 0
	for _, m := range msgs {
		if !done[m.ID] {
			n++
		}
	}
	return n
}

// unsettledDetail describes the ledger rows of the messages not settled
// yet (state, attempts, claim), for a failure message.
func (f *fleet) unsettledDetail(msgs []inbound) string {
	ctx := context.Background()
	led, err := ledger.Open(ctx, ledger.Config{Path: f.store})
	if err != nil {
		return err.Error()
	}
	defer led.Close()
	want := map[string]bool{}
	for _, m := range msgs {
		want[m.ID] = true
	}
	es, err := led.Recent(ctx, 100000, "")
	if err != nil {
		return err.Error()
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range es {
		seen[e.MessageID] = true
		if !want[e.MessageID] || e.State.Terminal() && e.IMAPDone {
			continue
		}
		owner, until, _ := led.Claimant(ctx, e.Loc)
		out = append(out, fmt.Sprintf("%s %s state=%s attempts=%d imap_done=%v claimant=%q lease_until=%s", e.Loc, e.MessageID, e.State, e.Attempts, e.IMAPDone, owner, until.Format(time.RFC3339Nano)))
	}
	for _, m := range msgs {
		if !seen[m.ID] {
			out = append(out, m.ID+": no ledger row")
		}
	}
	sort.Strings(out)
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("... %d more", len(out)-20))
	}
	return strings.Join(out, "; ")
}

// checkTickets: every ticket was opened for one of the test's messages
// (its idempotency key is the message's key and a serial of its body), no
// message has two, and the replied messages of one kind (body) either all
// have a ticket or none has: a crash neither lost a ticket nor opened a
// second.
func (f *fleet) checkTickets(msgs []inbound) (tickets int) {
	f.t.Helper()
	ctx := context.Background()
	keys := map[string]triage.Key{}
	for _, e := range f.inboxes[0].ledgerEntries() {
		keys[e.MessageID] = e.Key
	}
	byTicketKey := map[string]inbound{}
	for _, m := range msgs {
		for _, sn := range []string{"SN-48213-PL", "SN98765", "SN00000-XX"} {
			byTicketKey[dispatcher.TicketKey(keys[m.ID], sn)] = m
		}
	}
	db, err := store.Open(ctx, f.store, store.Options{ReadOnly: true})
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT seq, idempotency_key FROM tickets ORDER BY seq`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	perMessage := map[string]int{}
	for rows.Next() {
		var seq int64
		var key string
		if err := rows.Scan(&seq, &key); err != nil {
			f.t.Fatal(err)
		}
		tickets++
		m, ok := byTicketKey[key]
		if !ok {
			f.t.Errorf("ticket %d was opened for none of the test's messages", seq)
			continue
		}
		perMessage[m.ID]++
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
	replies := f.inboxes[0].sink.CountByHeader("In-Reply-To")
	human := map[string]bool{}
	for _, w := range f.inboxes {
		for id := range w.handedToPerson() {
			human[id] = true
		}
	}
	withTicket := map[string]map[bool]int{} // body -> has a ticket -> messages replied
	for _, m := range msgs {
		if perMessage[m.ID] > 1 {
			f.t.Errorf("message %s has %d tickets", m.ID, perMessage[m.ID])
		}
		if replies[m.ID] != 1 || human[m.ID] {
			continue // left for a person, perhaps before its ticket
		}
		if withTicket[m.Body] == nil {
			withTicket[m.Body] = map[bool]int{}
		}
		withTicket[m.Body][perMessage[m.ID] > 0]++
	}
	for body, n := range withTicket {
		if n[true] > 0 && n[false] > 0 {
			f.t.Errorf("of the messages %.30q..., %d have a ticket and %d none", body, n[true], n[false])
		}
	}
	return tickets
}

// TestFleetCrashConsistency runs several daemons on one PostgreSQL store,
// serving two inboxes of the in-memory IMAP server, and SIGKILLs one of
// them after another, restarting each at once. Every message must be
// answered exactly once or handed to a person; the tickets consistent.
// $TRIAGE_CRASH_DAEMONS (default 3) lists the daemon counts to run;
// $TRIAGE_CRASH_SCALE (default 1) multiplies the kills and messages.
func TestFleetCrashConsistency(t *testing.T) {
	for _, n := range crashList(t, "TRIAGE_CRASH_DAEMONS", 3) {
		t.Run(fmt.Sprintf("daemons=%d", n), func(t *testing.T) {
			a := mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target()
			b := mailtest.StartIMAP(t, mailtest.IMAPOptions{User: "brand-b@example.com"}).Target()
			scale := crashList(t, "TRIAGE_CRASH_SCALE", 1)[0]
			fleetCrash(t, newFleet(t, []mailtest.Target{a, b}, ""), n, 30*scale, []int{160 * scale, 80 * scale})
		})
	}
}

// TestDovecotFleetCrashConsistency is the same against Dovecot, the second
// inbox a second Dovecot user.
func TestDovecotFleetCrashConsistency(t *testing.T) {
	for _, n := range crashList(t, "TRIAGE_CRASH_DAEMONS", 3) {
		t.Run(fmt.Sprintf("daemons=%d", n), func(t *testing.T) {
			a, d := dovecotTarget(t)
			pw := d.AddUser(t, "brand-b@example.com")
			b := mailtest.Target{Name: "dovecot", Addr: d.Addr, User: "brand-b@example.com", Password: pw,
				Append: func(t testing.TB, mailbox string, raw []byte, flags ...imap.Flag) imap.UID {
					return d.AppendAs(t, "brand-b@example.com", mailbox, raw, flags...)
				},
				Client: func(t testing.TB) *imapclient.Client { return d.ClientAs(t, "brand-b@example.com") }}
			scale := crashList(t, "TRIAGE_CRASH_SCALE", 1)[0]
			fleetCrash(t, newFleet(t, []mailtest.Target{a, b}, ""), n, 20*scale, []int{140 * scale, 70 * scale})
		})
	}
}

// crashList reads a comma-separated list of numbers >= 1 from the
// environment variable, def without it.
func crashList(t *testing.T, env string, def int) []int {
	v := os.Getenv(env)
	if v == "" {
		return []int{def}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &n); err != nil || n < 1 {
			t.Fatalf("%s=%q: want a comma-separated list of numbers >= 1", env, v)
		}
		out = append(out, n)
	}
	return out
}

// fleetCrash runs daemons daemons on f's inboxes, delivering messages[i]
// to inbox i (half at once, the rest a third into the kills), kills a
// random daemon every 0.1-0.7 s until wantKills, lets the survivors
// finish, then checks every message of every inbox.
func fleetCrash(t *testing.T, f *fleet, daemons, wantKills int, messages []int) {
	if testing.Short() {
		t.Skip("several daemons killed over a minute: not in -short")
	}
	rng, seed := crashRand(t, "fleet crash test")
	var msgs [][]inbound
	deliver := func(from, to func(n int) int) {
		for i, w := range f.inboxes {
			for n := from(messages[i]); n < to(messages[i]); n++ {
				msgs[i] = append(msgs[i], w.deliver(n))
			}
		}
	}
	msgs = make([][]inbound, len(f.inboxes))
	deliver(func(int) int { return 0 }, func(n int) int { return n / 2 })
	start := time.Now()
	for i := range daemons {
		f.start(i)
	}
	kills := 0
	for kills < wantKills {
		if kills == wantKills/3 {
			deliver(func(n int) int { return n / 2 }, func(n int) int { return n })
		}
		time.Sleep(time.Duration(100+rng.IntN(600)) * time.Millisecond)
		i := rng.IntN(daemons)
		if !f.kill(i) {
			t.Fatalf("daemon %d ended before the kill:\n%s", i, tail(f.inboxes[0].logs(), 3000))
		}
		kills++
		f.start(i)
	}
	// The survivors (and the restarted) finish what is left themselves: the
	// claims of the killed run out after the lease.
	killPhase := time.Since(start)
	var all []inbound
	for _, m := range msgs {
		all = append(all, m...)
	}
	deadline := time.Now().Add(2 * time.Minute)
	left := f.unsettled(all)
	for left > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		left = f.unsettled(all)
	}
	if left > 0 {
		t.Errorf("the daemons left %d messages unsettled 2 minutes after the last kill: %s", left, f.unsettledDetail(all))
	}
	settle := time.Since(start) - killPhase
	f.stop()
	elapsed := time.Since(start)
	t.Logf("kills took %v; the daemons settled the rest in %v", killPhase.Round(time.Millisecond), settle.Round(time.Millisecond))
	// A last, undisturbed pass (it finds nothing to do when the daemons
	// finished).
	f.inboxes[0].finalOnce()

	tickets := f.checkTickets(all)
	t.Logf("| server | daemons | kills | inbox | messages | replied once | handed to a person (of which answered once) | duplicates | lost |")
	var total tally
	for i, w := range f.inboxes {
		tl, problems := w.tally(msgs[i])
		t.Logf("| %s | %d | %d | %s | %d | %d | %d (%d) | %d | %d |", w.tgt.Name, daemons, kills, w.prefix, tl.Messages, tl.Replied, tl.Human, tl.HumanAnswered, tl.Duplicates, tl.Lost)
		if tl.Duplicates+tl.Lost > 0 || len(problems) > 0 {
			sort.Strings(problems)
			t.Errorf("inbox %s not exactly once: %v", w.prefix, problems)
		}
		if tl.Replied == 0 {
			t.Errorf("inbox %s: no message answered; logs:\n%s", w.prefix, tail(w.logs(), 3000))
		}
		total.Messages += tl.Messages
		total.Replied += tl.Replied
		total.Human += tl.Human
		total.Duplicates += tl.Duplicates
		total.Lost += tl.Lost
	}
	reasons := map[string]int{}
	for _, e := range f.inboxes[0].ledgerEntries() {
		if e.State != ledger.StateReplied {
			reasons[string(e.State)+"/"+string(e.Reason)]++
		}
	}
	t.Logf("ledger entries not replied, by state/reason: %v", reasons)
	// What the daemons did: the protocol's paths, as logged.
	events := map[string]int{}
	for _, line := range strings.Split(f.inboxes[0].logs(), "\n") {
		for _, msg := range []string{"polling this inbox for the daemons sharing the store", "another daemon polls this inbox",
			"pending reply found in the Sent folder", "pending reply could not be confirmed", "recovered", "watch starting"} {
			if strings.Contains(line, msg) {
				events[msg]++
			}
		}
	}
	t.Logf("logged: %v", events)
	t.Logf("fleet crash (%s): daemons=%d kills=%d messages=%d replied_once=%d handed_to_person=%d duplicates=%d lost=%d tickets=%d smtp_accepted=%d (%v, seed %d)",
		t.Name(), daemons, kills, total.Messages, total.Replied, total.Human, total.Duplicates, total.Lost, tickets,
		len(f.inboxes[0].sink.Messages()), elapsed.Round(time.Millisecond), seed)
}
