package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"triage/internal/ledger"
	"triage/internal/testkit/mailtest"
	"triage/internal/testkit/pgtest"
)

// TestStoreCommands moves an installation onto PostgreSQL: the SQLite
// ledger and tickets written by process are copied with `store migrate
// --from-sqlite`, then process, tickets and ledger work on the store
// (--store or $TRIAGE_STORE) and find what the files held.
func TestStoreCommands(t *testing.T) {
	dir := t.TempDir()
	ticketsDB, ledgerDB := filepath.Join(dir, "tickets.db"), filepath.Join(dir, "ledger.db")
	outbox := filepath.Join(dir, "outbox")
	base := []string{"process", "--json", "--warranty-csv", "../../examples/warranty.csv", "--outbox", outbox, "--staff", "kierownik@example.com"}
	code, stdout, stderr := runCLI(t, "", append(base, "--tickets-db", ticketsDB, "../../examples/inbox/01-valid-warranty-pl.eml")...)
	if code != 0 {
		t.Fatalf("process on SQLite: exit %d\n%s", code, stderr)
	}
	first := decodeOutcomes(t, stdout)[0]
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{Path: ledgerDB, Now: func() time.Time { return time.Date(2026, 4, 5, 6, 7, 8, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Record(ctx, ledger.Entry{Loc: ledger.Loc{Account: "acct", Mailbox: "INBOX", UIDValidity: 9, UID: 1},
		Key: "k1", MessageID: first.MessageID, Sender: first.From, State: ledger.StateReplied, Scenario: first.Scenario}); err != nil {
		t.Fatal(err)
	}
	l.Close()

	url := pgtest.URL(t)
	code, stdout, stderr = runCLI(t, "", "store", "migrate", "--from-sqlite", ledgerDB, ticketsDB, "--store", url)
	if code != 0 || !strings.Contains(stdout, "1 messages") || !strings.Contains(stdout, "1 tickets") {
		t.Fatalf("store migrate: exit %d\n%s%s", code, stdout, stderr)
	}

	// The follow-up joins the copied conversation: process reads the store.
	t.Setenv("TRIAGE_STORE", url)
	code, stdout, stderr = runCLI(t, "", append(base, "../../examples/inbox/follow-ups/14-follow-up-pl.eml")...)
	if code != 0 {
		t.Fatalf("process on the store: exit %d\n%s", code, stderr)
	}
	if fu := decodeOutcomes(t, stdout)[0]; fu.TicketID != first.TicketID || !fu.Followup {
		t.Errorf("follow-up on the store: ticket %q followup %v, want %q true", fu.TicketID, fu.Followup, first.TicketID)
	}
	code, stdout, stderr = runCLI(t, "", "tickets", "show", first.TicketID, "--json")
	if code != 0 || !strings.Contains(stdout, `"notes":[{`) {
		t.Errorf("tickets show on the store: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "", "ledger", "--json")
	var e ledger.Entry
	if err := json.Unmarshal([]byte(strings.SplitN(stdout, "\n", 2)[0]), &e); code != 0 || err != nil || e.MessageID != first.MessageID || e.State != ledger.StateReplied {
		t.Errorf("ledger on the store: exit %d, %v: %+v\n%s", code, err, e, stderr)
	}
	if code, stdout, stderr = runCLI(t, "", "ledger", "stats", "--json"); code != 0 {
		t.Errorf("ledger stats on the store: exit %d\n%s%s", code, stdout, stderr)
	}

	// Copying twice would mix two histories.
	if code, _, stderr = runCLI(t, "", "store", "migrate", "--from-sqlite", ledgerDB, ticketsDB); code != 1 || !strings.Contains(stderr, "not empty") {
		t.Errorf("second copy: exit %d, want 1 (not empty)\n%s", code, stderr)
	}
}

func TestStoreFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"store", "migrate"}, "--store URL"},
		{[]string{"store", "migrate", "--store", filepath.Join(dir, "x.db")}, "not a postgres:// URL"},
		{[]string{"store", "migrate", "--store", "postgres://h/db", "a.db"}, "without --from-sqlite"},
		{[]string{"store", "migrate", "--store", "postgres://h/db", "--from-sqlite", "a.db"}, "two files"},
		{[]string{"tickets", "list", "--store", "mysql://h/db"}, "not a postgres:// URL"},
		{[]string{"ledger", "--store", filepath.Join(dir, "ledger.db")}, "not a postgres:// URL"},
		{[]string{"process", "--warranty-csv", "../../examples/warranty.csv", "--outbox", dir, "--store", "sqlite:x", "../../examples/inbox/01-valid-warranty-pl.eml"}, "not a postgres:// URL"},
	} {
		code, _, stderr := runCLI(t, "", tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 with %q\n%s", tc.args, code, tc.want, stderr)
		}
	}
	// A password in a URL that cannot be reached is not printed.
	code, _, stderr := runCLI(t, "", "store", "migrate", "--store", "postgres://u:hunter2@127.0.0.1:1/db?connect_timeout=2")
	if code != 1 || strings.Contains(stderr, "hunter2") {
		t.Errorf("unreachable store: exit %d, want 1 without the password\n%s", code, stderr)
	}
}

func TestStoreMigrateSchemaOnly(t *testing.T) {
	url := pgtest.URL(t)
	for range 2 {
		code, stdout, stderr := runCLI(t, "", "store", "migrate", "--store", url)
		if code != 0 || !strings.Contains(stdout, "schema up to date") {
			t.Fatalf("store migrate: exit %d\n%s%s", code, stdout, stderr)
		}
	}
}

// TestWatchOnStore: watch with store: in its configuration keeps its ledger
// and tickets in PostgreSQL (no SQLite file is written); a second run finds
// both messages handled; ledger --config reads the store named there.
func TestWatchOnStore(t *testing.T) {
	noDefaultConfig(t)
	srv := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	raw, err := os.ReadFile("../../examples/inbox/01-valid-warranty-pl.eml")
	if err != nil {
		t.Fatal(err)
	}
	srv.Append(t, "INBOX", raw)
	srv.Append(t, "INBOX", []byte(strings.Replace(string(raw), "Message-ID: <", "Message-ID: <second.", 1)))
	dir := t.TempDir()
	csv, _ := filepath.Abs("../../examples/warranty.csv")
	url := pgtest.URL(t)
	cfg := filepath.Join(dir, "triage.yaml")
	writeTestFile(t, cfg, "imap: {addr: "+srv.Addr+", tls: none, user: "+srv.User+", password: "+srv.Password+"}\noutbox: out\nledger: ledger.db\n"+
		"store: "+url+"\npipeline: {offline: true, warranty_csv: "+csv+", tickets_db: tickets.db}\n")
	for run := range 2 {
		if code, _, stderr := runArgs(t, "watch", "--config", cfg, "--once"); code != 0 {
			t.Fatalf("run %d: exit %d:\n%s", run, code, stderr)
		}
	}
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{Path: url, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	counts, err := l.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[ledger.State]int{ledger.StateReplied: 2}, counts); diff != "" {
		t.Errorf("ledger on the store after two runs (-want +got):\n%s", diff)
	}
	for _, f := range []string{"ledger.db", "tickets.db"} {
		if fileExists(filepath.Join(dir, f)) {
			t.Errorf("%s written although the store is PostgreSQL", f)
		}
	}
	code, stdout, stderr := runArgs(t, "ledger", "--config", cfg)
	if code != 0 || strings.Count(stdout, "replied") < 2 {
		t.Errorf("ledger --config: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runArgs(t, "tickets", "list", "--store", url, "--json")
	if code != 0 || strings.Count(stdout, "TKT-00000") != 2 {
		t.Errorf("tickets list --store: exit %d\n%s%s", code, stdout, stderr)
	}
}

// The inboxes of one watch process share one pool of connections to the
// store: the ledger's, which the tickets and the model budget use too.
// With the pool held to two connections the database sees those, each
// inbox's poll lock and the odd connection the pool replaces; a pool per
// inbox for its tickets (and one for the ledger) would need at least
// 2*inboxes+1.
func TestWatchInboxesShareOneStore(t *testing.T) {
	noDefaultConfig(t)
	raw, err := os.ReadFile("../../examples/inbox/01-valid-warranty-pl.eml")
	if err != nil {
		t.Fatal(err)
	}
	const inboxes = 5
	var section strings.Builder
	for i := range inboxes {
		srv := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
		for j := range 2 {
			// A customer of their own, so each message opens its ticket.
			m := strings.ReplaceAll(string(raw), "anna.nowak@", fmt.Sprintf("anna.nowak.%d.%d@", i, j))
			srv.Append(t, "INBOX", []byte(strings.Replace(m, "Message-ID: <", fmt.Sprintf("Message-ID: <%d.%d.", i, j), 1)))
		}
		fmt.Fprintf(&section, "  - name: brand-%d\n    imap: {addr: %s, tls: none, user: %s, password: %s, account: brand-%d}\n    from: \"Serwis %d <serwis%d@example.com>\"\n",
			i, srv.Addr, srv.User, srv.Password, i, i, i)
	}
	dir := t.TempDir()
	csv, _ := filepath.Abs("../../examples/warranty.csv")
	url := pgtest.URL(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	cfg := filepath.Join(dir, "triage.yaml")
	writeTestFile(t, cfg, "outbox: out\nstore: "+url+sep+"pool_max_conns=2\n"+
		"concurrency: 4\npipeline: {offline: true, warranty_csv: "+csv+"}\ninboxes:\n"+section.String())
	if code, _, stderr := runArgs(t, "watch", "--config", cfg, "--once"); code != 0 {
		t.Fatalf("watch --once: exit %d:\n%s", code, stderr)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var sessions int
	if err := conn.QueryRow(ctx, `SELECT sessions FROM pg_stat_database WHERE datname = current_database()`).Scan(&sessions); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d inboxes: %d sessions on the store", inboxes, sessions)
	if sessions < 1 || sessions >= 2*inboxes+1 {
		t.Errorf("watch of %d inboxes opened %d sessions on the store, want fewer than %d (a pool of 2 and a poll lock per inbox)", inboxes, sessions, 2*inboxes+1)
	}
	code, stdout, stderr := runArgs(t, "tickets", "list", "--store", url, "--json")
	if code != 0 || strings.Count(stdout, `"ticket_id"`) != 2*inboxes {
		t.Errorf("tickets list --store: exit %d, want %d tickets\n%s%s", code, 2*inboxes, stdout, stderr)
	}
}
