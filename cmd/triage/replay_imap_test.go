package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/replay"
	"triage/internal/testkit/mailtest"
)

// protocolLog collects an IMAP server's raw protocol; safe for the
// server's connections to write concurrently.
type protocolLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *protocolLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *protocolLog) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.buf.String()
	l.buf.Reset()
	return s
}

// mailboxState is every mailbox of the server with its messages' UIDs,
// flags and bytes.
func mailboxState(t *testing.T, srv *mailtest.IMAP) map[string][]mailtest.Message {
	t.Helper()
	c := srv.Client(t)
	list, err := c.List("", "*", nil).Collect()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]mailtest.Message{}
	for _, m := range list {
		msgs := mailtest.ReadMailbox(t, c, m.Mailbox)
		for i := range msgs {
			slices.Sort(msgs[i].Flags) // the server's order is not stable
		}
		out[m.Mailbox] = msgs
	}
	return out
}

// TestReplayInbox replays the watch inbox itself (--config, no INPUTS):
// watch answers the sample inbox on an in-memory IMAP server and records
// the outcomes in its ledger; replay then reads the same mailbox through
// the configuration, read-only, with the configuration's pipeline (its
// staff address among them), and reports the flips of a policy change.
// Nothing on the server changes: no \Seen, no keyword, no move, no
// append; the protocol shows EXAMINE and BODY.PEEK only.
func TestReplayInbox(t *testing.T) {
	noDefaultConfig(t)
	proto := &protocolLog{}
	srv := mailtest.StartIMAP(t, mailtest.IMAPOptions{Debug: proto})
	t.Setenv("TRIAGE_IMAP_PASSWORD", srv.Password)
	dir := t.TempDir()
	csv, err := filepath.Abs("../../examples/warranty.csv")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "triage.yaml")
	writeTestFile(t, cfg, "imap:\n  addr: "+srv.Addr+"\n  tls: none\n  user: "+srv.User+"\n"+
		"ledger: ledger.db\noutbox: outbox\n"+
		"pipeline:\n  offline: true\n  from: \"Serwis <serwis@example.com>\"\n  warranty_csv: "+csv+"\n  tickets_db: tickets.db\n  staff: [kierownik@example.com]\n")
	files := sampleInbox(t)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srv.Append(t, "INBOX", raw)
	}
	if code, _, stderr := runCLI(t, "", "watch", "--config", cfg, "--once"); code != 0 {
		t.Fatalf("watch: exit %d\n%s", code, stderr)
	}
	before := mailboxState(t, srv)
	for _, m := range before["INBOX"] {
		if !m.HasFlag("$Triaged") {
			t.Fatalf("watch left INBOX uid %d unmarked: %v", m.UID, m.Flags)
		}
	}
	proto.take()

	runReplayCLI := func(t *testing.T, args ...string) (int, replayJSON, string) {
		t.Helper()
		code, stdout, stderr := runCLI(t, "", append([]string{"replay", "--json"}, args...)...)
		return code, decodeReplay(t, stdout), stderr
	}

	// watch moved the escalated email (14) to Needs-Human; the rest stay
	// in INBOX.
	inbox, human := len(before["INBOX"]), len(before["Needs-Human"])
	if inbox+human != len(files) || human == 0 {
		t.Fatalf("after watch: %d in INBOX, %d in Needs-Human; want %d in all, the escalation in Needs-Human", inbox, human, len(files))
	}

	t.Run("the same instructions flip nothing, escalation included", func(t *testing.T) {
		for _, box := range []struct {
			args []string
			n    int
		}{{nil, inbox}, {[]string{"--mailbox", "Needs-Human"}, human}} {
			code, got, stderr := runReplayCLI(t, append([]string{"--config", cfg, "--instructions", shippedInstructions(t)}, box.args...)...)
			if code != 0 {
				t.Fatalf("%v: exit %d, flips %+v; stderr:\n%s", box.args, code, got.flips, stderr)
			}
			if got.summary.Emails != box.n || got.summary.NoBaseline != 0 || got.summary.Unreadable != 0 {
				t.Errorf("%v: summary %+v, want %d emails, each with a baseline", box.args, got.summary, box.n)
			}
			if !strings.Contains(stderr, "read-only (EXAMINE, BODY.PEEK") {
				t.Errorf("stderr does not say the inbox is read read-only:\n%s", stderr)
			}
		}
	})

	t.Run("a policy that stops opening tickets", func(t *testing.T) {
		code, got, stderr := runReplayCLI(t, "--config", cfg, "--instructions", noTicketInstructions(t))
		if code != exitFlipped {
			t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFlipped, stderr)
		}
		want := replay.Summary{Type: replay.TypeSummary, Emails: inbox, Flips: 7, ByKind: map[replay.Kind]int{replay.KindTicket: 7, replay.KindCalls: 7, replay.KindCommitments: 7}, Runs: 1, Baseline: "ledger"}
		if diff := cmp.Diff(want, got.summary); diff != "" {
			t.Errorf("summary (-want +got):\n%s", diff)
		}
		for _, f := range got.flips {
			if !strings.HasPrefix(f.Input, srv.User+"/INBOX;UIDVALIDITY=") || f.Baseline.Detail != "recorded by watch" {
				t.Errorf("flip %q: baseline %q", f.Input, f.Baseline.Detail)
			}
		}
	})

	t.Run("bounded: --limit and --since", func(t *testing.T) {
		code, got, stderr := runReplayCLI(t, "--config", cfg, "--instructions", noTicketInstructions(t), "--limit", "3")
		// The three newest in INBOX: 12 (a ticket), 13 and 15 (a ticket on
		// the statutory liability).
		if code != exitFlipped || got.summary.Emails != 3 || got.summary.Flips != 2 {
			t.Errorf("--limit 3: exit %d, summary %+v; stderr:\n%s", code, got.summary, stderr)
		}
		code, got, stderr = runReplayCLI(t, "--config", cfg, "--instructions", noTicketInstructions(t), "--since", "2100-01-01")
		if code != 0 || got.summary.Emails != 0 {
			t.Errorf("--since 2100-01-01: exit %d, summary %+v; stderr:\n%s", code, got.summary, stderr)
		}
	})

	t.Run("the configuration found through $TRIAGE_CONFIG", func(t *testing.T) {
		t.Setenv("TRIAGE_CONFIG", cfg)
		code, got, stderr := runReplayCLI(t, "--instructions", noTicketInstructions(t))
		if code != exitFlipped || got.summary.Flips != 7 || !strings.Contains(stderr, "named by $TRIAGE_CONFIG") {
			t.Errorf("exit %d, summary %+v; stderr:\n%s", code, got.summary, stderr)
		}
	})

	// Nothing on the server changed, and replay only examined and peeked.
	if diff := cmp.Diff(before, mailboxState(t, srv)); diff != "" {
		t.Errorf("the server changed under replay (-before +after):\n%s", diff)
	}
	log := proto.take()
	for _, want := range []string{" EXAMINE INBOX", "BODY.PEEK[]", "BODY.PEEK[HEADER]"} {
		if !strings.Contains(log, want) {
			t.Errorf("replay's IMAP commands lack %q", want)
		}
	}
	for _, line := range strings.Split(log, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] == "*" || fields[0] == "+" {
			continue // server responses
		}
		cmd := strings.ToUpper(fields[1])
		if cmd == "UID" && len(fields) > 2 {
			cmd += " " + strings.ToUpper(fields[2])
		}
		switch cmd {
		case "SELECT", "STORE", "UID STORE", "COPY", "UID COPY", "MOVE", "UID MOVE", "APPEND", "EXPUNGE", "UID EXPUNGE", "CREATE", "DELETE", "RENAME":
			t.Errorf("replay sent %s: %q", cmd, line)
		}
		if strings.Contains(strings.ToUpper(line), "FETCH") && strings.Contains(line, "BODY[") && !strings.Contains(line, "BODY.PEEK[") && fields[0] != "*" {
			t.Errorf("replay fetched without PEEK: %q", line)
		}
	}
}

// TestReplayInboxUsage: without INPUTS replay needs a configuration, the
// inbox bounds go only with it, and an inbox that cannot be reached fails
// (exit 1) naming it.
func TestReplayInboxUsage(t *testing.T) {
	noDefaultConfig(t)
	shipped := shippedInstructions(t)
	dir := t.TempDir()
	csv, err := filepath.Abs("../../examples/warranty.csv")
	if err != nil {
		t.Fatal(err)
	}
	down := filepath.Join(dir, "down.yaml")
	writeTestFile(t, down, "imap:\n  addr: 127.0.0.1:1\n  tls: none\n  user: u\n  password: p\nledger: ledger.db\n"+
		"pipeline:\n  offline: true\n  warranty_csv: "+csv+"\n  tickets_db: tickets.db\n")
	noPass := filepath.Join(dir, "nopass.yaml")
	writeTestFile(t, noPass, "imap:\n  addr: 127.0.0.1:1\n  tls: none\n  user: u\nledger: ledger.db\npipeline:\n  offline: true\n  warranty_csv: "+csv+"\n")
	if err := os.WriteFile(filepath.Join(dir, "ledger.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no input, no configuration", []string{"--offline", "--warranty-csv", csv, "--baseline", shipped}, exitUsage, "no input: give .eml or mbox files, or --config FILE"},
		{"--since with files", []string{"--offline", "--warranty-csv", csv, "--baseline", shipped, "--since", "2026-01-01", "../../examples/inbox/01-valid-warranty-pl.eml"}, exitUsage, "--since, --limit and --mailbox bound the inbox read"},
		{"a --since that is not a day", []string{"--config", down, "--since", "last week"}, exitUsage, `--since "last week": want a day as YYYY-MM-DD`},
		{"--limit 0", []string{"--config", down, "--limit", "0"}, exitUsage, "--limit must be at least 1"},
		{"no IMAP password", []string{"--config", noPass}, exitUsage, "the inbox cannot be read"},
		{"the server cannot be reached", []string{"--config", down}, exitFailed, "127.0.0.1:1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", append([]string{"replay", "--instructions", shipped}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, want %d with %q; stderr:\n%s", code, tt.code, tt.want, stderr)
			}
		})
	}
}
