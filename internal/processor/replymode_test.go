package processor_test

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"triage"
	embedded "triage/instructions"
	"triage/internal/agent"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/processor"
	"triage/internal/serial"
	"triage/internal/testkit/toolstest"
)

// modeEnv is newEnv with the reply mode, the dry run and scenario
// frontmatter overrides under the test's control.
type modeEnv struct {
	proc      *processor.Processor
	outbox    string
	ticketsDB string
}

// instructionsWith returns the built-in instructions with reply_mode set in
// the frontmatter of the named scenarios.
func instructionsWith(t testing.TB, modes map[string]string) *instructions.Scenarios {
	t.Helper()
	fsys := fstest.MapFS{}
	err := fs.WalkDir(embedded.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(embedded.FS, p)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(filepath.Base(p), ".md")
		if m := modes[name]; m != "" && strings.HasPrefix(p, "scenarios/") {
			b = []byte(strings.Replace(string(b), "\nname: "+name+"\n", "\nname: "+name+"\nreply_mode: "+m+"\n", 1))
		}
		fsys[p] = &fstest.MapFile{Data: b}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	set, err := instructions.LoadScenarios(fsys, []string{"check_warranty", "create_ticket", "send_email", "notify_staff", "search_manual"})
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range modes {
		if sc := set.Get(name); sc == nil || string(sc.ReplyMode) != m {
			t.Fatalf("scenario %s: reply_mode not set to %q", name, m)
		}
	}
	return set
}

func newModeEnv(t testing.TB, m agent.Model, set *instructions.Scenarios, mod func(*processor.Config)) *modeEnv {
	t.Helper()
	e := newEnv(t, m, func(_ *agent.Config, c *processor.Config) {
		c.Scenarios = set
		c.Tickets, c.History = nil, nil // every email stands alone here: no conversations
		if mod != nil {
			mod(c)
		}
	})
	return &modeEnv{proc: e.proc, outbox: e.outbox, ticketsDB: e.ticketsDB}
}

// files lists the messages in the outbox dir (not its index or lock file),
// relative, sorted.
func files(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		// The outbox's own bookkeeping (its index, look-up table, lock) is
		// named with a leading dot; the replies and drafts are not.
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func ticketCount(t testing.TB, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM tickets`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

const validText = "Dzień dobry, mój ekspres SN-48213-PL nie działa. Proszę o naprawę gwarancyjną."

// Draft mode: the reply is complete and threaded but lands in outbox/drafts
// and the outcome is drafted; the ticket is still opened. A scenario's
// reply_mode overrides the run's mode both ways.
func TestReplyModes(t *testing.T) {
	valid := eml("Anna <anna@example.pl>", "Reklamacja", validText)
	noSerial := eml("jan@example.pl", "Pytanie", "Dzień dobry, ekspres nie działa, proszę o naprawę gwarancyjną.")
	tests := []struct {
		name    string
		run     triage.ReplyMode
		modes   map[string]string
		raw     []byte
		status  triage.Status
		scen    string
		dirs    []string // where the reply went: "" (outbox) or "drafts"
		tickets int
	}{
		{"run draft", triage.ReplyDraft, nil, valid, triage.StatusDrafted, "valid-warranty", []string{"drafts"}, 1},
		{"run send (default)", "", nil, valid, triage.StatusReplied, "valid-warranty", []string{""}, 1},
		{"scenario draft overrides run send", triage.ReplySend, map[string]string{"valid-warranty": "draft"}, valid, triage.StatusDrafted, "valid-warranty", []string{"drafts"}, 1},
		{"other scenario keeps run send", triage.ReplySend, map[string]string{"valid-warranty": "draft"}, noSerial, triage.StatusReplied, "missing-info", []string{""}, 0},
		{"scenario send overrides run draft", triage.ReplyDraft, map[string]string{"missing-info": "send"}, noSerial, triage.StatusReplied, "missing-info", []string{""}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newModeEnv(t, &scripted{}, instructionsWith(t, tc.modes), func(c *processor.Config) { c.ReplyMode = tc.run })
			out := e.proc.Process(context.Background(), processor.Input{Name: "in.eml", Raw: tc.raw})
			if out.Status != tc.status || out.Scenario != tc.scen || out.DryRun {
				t.Fatalf("status/scenario/dry_run = %s/%s/%v (%s: %s), want %s/%s/false", out.Status, out.Scenario, out.DryRun, out.Reason, out.Detail, tc.status, tc.scen)
			}
			fs := files(t, e.outbox)
			var dirs []string
			for _, f := range fs {
				d := filepath.Dir(f)
				if d == "." {
					d = ""
				}
				dirs = append(dirs, d)
			}
			if diff := cmp.Diff(tc.dirs, dirs); diff != "" {
				t.Errorf("outbox files %v (-want +got dirs):\n%s", fs, diff)
			}
			if out.Reply == nil || out.Reply.Path != filepath.Join(e.outbox, fs[0]) || out.Reply.MessageID == "" {
				t.Fatalf("reply = %+v, want the written file %s", out.Reply, fs[0])
			}
			raw, _ := os.ReadFile(out.Reply.Path)
			for _, h := range []string{"In-Reply-To: " + "<", "References: <", "To: ", "Subject: Re: "} {
				if !strings.Contains(string(raw), "\r\n"+h) {
					t.Errorf("reply lacks %q:\n%s", h, raw)
				}
			}
			if n := ticketCount(t, e.ticketsDB); n != tc.tickets {
				t.Errorf("tickets = %d, want %d", n, tc.tickets)
			}
		})
	}
}

// A dry run leaves the outbox and the ticket store untouched, yet the
// outcome is complete: the scenario, every call (effects marked dry_run), and
// the reply that would have gone out; in draft mode the status is drafted.
func TestDryRun(t *testing.T) {
	for _, mode := range []triage.ReplyMode{triage.ReplySend, triage.ReplyDraft} {
		t.Run(string(mode), func(t *testing.T) {
			e := newModeEnv(t, &scripted{}, instructionsWith(t, nil), func(c *processor.Config) { c.DryRun, c.ReplyMode = true, mode })
			out := e.proc.Process(context.Background(), processor.Input{Name: "in.eml", Raw: eml("Anna <anna@example.pl>", "Reklamacja", validText)})
			want := map[triage.ReplyMode]triage.Status{triage.ReplySend: triage.StatusReplied, triage.ReplyDraft: triage.StatusDrafted}[mode]
			if out.Status != want || !out.DryRun {
				t.Fatalf("status %s (%s: %s) dry_run %v, want %s and dry_run", out.Status, out.Reason, out.Detail, out.DryRun, want)
			}
			var calls []string
			for _, c := range out.FunctionCalls {
				s := c.Name
				if c.Prefetched {
					s += " prefetched"
				}
				if c.DryRun {
					s += " dry_run"
				}
				calls = append(calls, s)
			}
			if diff := cmp.Diff([]string{"check_warranty prefetched", "check_warranty", "create_ticket dry_run", "send_email dry_run"}, calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if out.FunctionCalls[0].Result["status"] != "valid" {
				t.Errorf("check_warranty (no effect) did not run: %v", out.FunctionCalls[0].Result)
			}
			if out.Reply == nil || out.Reply.To != "anna@example.pl" || out.Reply.Subject != "Re: Reklamacja" || out.Reply.Path != "" {
				t.Errorf("reply = %+v, want the would-be reply to anna@example.pl without a file", out.Reply)
			}
			if fs := files(t, e.outbox); len(fs) != 0 {
				t.Errorf("outbox holds %v, want nothing", fs)
			}
			if n := ticketCount(t, e.ticketsDB); n != 0 {
				t.Errorf("tickets = %d, want 0", n)
			}
		})
	}
}

// A model that breaks a guardrail in a dry run is refused as always.
func TestDryRunGuardrails(t *testing.T) {
	e := newModeEnv(t, &scripted{to: "attacker@evil.example"}, instructionsWith(t, nil), func(c *processor.Config) { c.DryRun = true })
	out := e.proc.Process(context.Background(), processor.Input{Name: "in.eml", Raw: eml("Anna <anna@example.pl>", "Reklamacja", validText)})
	if out.Status != triage.StatusFailed || out.Reason != triage.ReasonEmailNotSent || !out.DryRun {
		t.Fatalf("status %s/%s dry_run %v, want failed/email_not_sent in a dry run", out.Status, out.Reason, out.DryRun)
	}
	last := out.FunctionCalls[len(out.FunctionCalls)-1]
	if last.Name != "send_email" || !last.Blocked || last.DryRun {
		t.Errorf("last call = %+v, want send_email blocked (not a dry-run answer)", last)
	}
}

func TestReplyModeInvalidConfig(t *testing.T) {
	ext, _ := serial.New()
	_, err := processor.Assemble(agent.Config{Model: &scripted{}},
		dispatcher.Config{Tools: toolstest.Shipped(t), Builtins: dispatcher.Routes(nil, nil, nil, nil, "", "", dispatcher.Notices{})},
		processor.Config{Scenarios: instructionsWith(t, nil), Extractor: ext, ReplyMode: "later"})
	if err == nil || !strings.Contains(err.Error(), `ReplyMode "later"`) {
		t.Fatalf("Assemble with ReplyMode \"later\": err = %v, want one naming it", err)
	}
}

// fixedAutonomy answers one mode and remembers what it was asked.
type fixedAutonomy struct {
	mode  triage.ReplyMode
	asked []string
}

func (a *fixedAutonomy) ReplyMode(_ context.Context, scenario string, inbox triage.Inbox) triage.ReplyMode {
	a.asked = append(a.asked, scenario+"@"+inbox.String())
	return a.mode
}

// Reply mode auto (the run's or a scenario's) is resolved by
// Config.Autonomy for the message's scenario and inbox; without a resolver
// or an inbox (triage process), and for anything but send, it drafts. A
// scenario with a fixed mode never asks.
func TestReplyModeAuto(t *testing.T) {
	valid := eml("Anna <anna@example.pl>", "Reklamacja", validText)
	inbox := triage.Inbox{Account: "support@example.pl", Mailbox: "INBOX"}
	tests := []struct {
		name   string
		run    triage.ReplyMode
		modes  map[string]string
		answer triage.ReplyMode // "" : no resolver
		inbox  triage.Inbox
		status triage.Status
		asked  []string
	}{
		{"run auto, qualified", triage.ReplyAuto, nil, triage.ReplySend, inbox, triage.StatusReplied, []string{"valid-warranty@support@example.pl/INBOX"}},
		{"run auto, not qualified", triage.ReplyAuto, nil, triage.ReplyDraft, inbox, triage.StatusDrafted, []string{"valid-warranty@support@example.pl/INBOX"}},
		{"scenario auto overrides run send", triage.ReplySend, map[string]string{"valid-warranty": "auto"}, triage.ReplySend, inbox, triage.StatusReplied, []string{"valid-warranty@support@example.pl/INBOX"}},
		{"scenario draft overrides run auto", triage.ReplyAuto, map[string]string{"valid-warranty": "draft"}, triage.ReplySend, inbox, triage.StatusDrafted, nil},
		{"no resolver drafts", triage.ReplyAuto, nil, "", inbox, triage.StatusDrafted, nil},
		{"no inbox drafts", triage.ReplyAuto, nil, triage.ReplySend, triage.Inbox{}, triage.StatusDrafted, nil},
		{"an answer that is not send drafts", triage.ReplyAuto, nil, triage.ReplyAuto, inbox, triage.StatusDrafted, []string{"valid-warranty@support@example.pl/INBOX"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &fixedAutonomy{mode: tc.answer}
			e := newModeEnv(t, &scripted{}, instructionsWith(t, tc.modes), func(c *processor.Config) {
				c.ReplyMode = tc.run
				if tc.answer != "" {
					c.Autonomy = a
				}
			})
			out := e.proc.Process(context.Background(), processor.Input{Name: "in.eml", Raw: valid, Inbox: tc.inbox})
			if out.Status != tc.status {
				t.Fatalf("status %s (%s: %s), want %s", out.Status, out.Reason, out.Detail, tc.status)
			}
			if diff := cmp.Diff(tc.asked, a.asked); diff != "" {
				t.Errorf("resolver asked (-want +got):\n%s", diff)
			}
		})
	}
}
