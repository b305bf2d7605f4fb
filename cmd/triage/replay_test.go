package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/instructions"
	"triage/internal/decision"
	"triage/internal/ledger"
	"triage/internal/replay"
)

// noTicketInstructions writes a copy of the shipped instructions whose
// valid-warranty scenario no longer declares create_ticket: a policy change
// that stops opening tickets.
func noTicketInstructions(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, instructions.FS); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "scenarios", "valid-warranty.md")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "  - name: create_ticket")
	j := strings.Index(s[i+1:], "  - name:")
	if i < 0 || j < 0 {
		t.Fatal("valid-warranty.md: no create_ticket declaration to remove")
	}
	if err := os.WriteFile(p, []byte(s[:i]+s[i+1+j:]), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// noStatutoryInstructions writes a copy of the shipped instructions whose
// policy gives a Polish consumer no statutory liability: an expired
// guarantee's claim is decided none (a paid repair quote) instead of
// statutory.
func noStatutoryInstructions(t *testing.T) string {
	t.Helper()
	dir := shippedInstructions(t)
	p := filepath.Join(dir, "policy.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	const from = "liability_months: 24          # art. 43c(1)"
	if !strings.Contains(string(b), from) {
		t.Fatal("policy.yaml: no consumer liability_months to change")
	}
	s := strings.Replace(string(b), from, "liability_months: 0 #", 1)
	s = strings.Replace(s, "presumption_months: 24", "presumption_months: 0", 1)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func shippedInstructions(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, instructions.FS); err != nil {
		t.Fatal(err)
	}
	return dir
}

func sampleInbox(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../examples/inbox/*.eml")
	if err != nil || len(files) < 8 {
		t.Fatalf("sample inbox: %d files, err %v", len(files), err)
	}
	return files
}

type replayJSON struct {
	flips   []replay.Record
	summary replay.Summary
}

func decodeReplay(t *testing.T, s string) replayJSON {
	t.Helper()
	var out replayJSON
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var probe struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &probe); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		switch probe.Type {
		case "summary":
			if err := json.Unmarshal(sc.Bytes(), &out.summary); err != nil {
				t.Fatal(err)
			}
		default:
			var r replay.Record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			out.flips = append(out.flips, r)
		}
	}
	return out
}

// validWarrantyInputs are the sample emails the shipped instructions answer
// with a ticket (valid-warranty, check_warranty then create_ticket): a valid
// guarantee, or an expired one the statutory liability still covers.
var validWarrantyInputs = []string{
	"01-valid-warranty-pl.eml", "02-valid-warranty-en.eml", "08-html-windows-1250.eml",
	"09-pdf-attachment.eml", "10-serial-in-quoted-history.eml", "12-prompt-injection.eml",
	"15-statutory-pl.eml",
}

func TestReplayBaselineInstructions(t *testing.T) {
	noDefaultConfig(t)
	files := sampleInbox(t)
	noTicket := noTicketInstructions(t)
	shipped := shippedInstructions(t)
	common := []string{"replay", "--offline", "--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(t.TempDir(), "none.db")}

	t.Run("a broken baseline is named as --baseline", func(t *testing.T) {
		broken := t.TempDir()
		copyDir(t, shipped, broken)
		writeTestFile(t, filepath.Join(broken, "policy.yaml"), "default: nowhere\n")
		args := append(append(common, "--instructions", shipped, "--baseline", broken), files...)
		code, _, stderr := runCLI(t, "", args...)
		if code != exitUsage || !strings.Contains(stderr, "--baseline "+broken) || strings.Contains(stderr, "--instructions "+broken) {
			t.Fatalf("exit %d, want %d naming --baseline %s; stderr:\n%s", code, exitUsage, broken, stderr)
		}
	})

	t.Run("a policy that stops opening tickets flips every valid-warranty email", func(t *testing.T) {
		args := append(append(common, "--json", "--instructions", noTicket, "--baseline", shipped), files...)
		code, stdout, stderr := runCLI(t, "", args...)
		if code != exitFlipped {
			t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFlipped, stderr)
		}
		got := decodeReplay(t, stdout)
		var inputs []string
		for _, f := range got.flips {
			inputs = append(inputs, filepath.Base(f.Input))
			// The reply no longer names a ticket: ticket -> none.
			if diff := cmp.Diff([]replay.Kind{replay.KindTicket, replay.KindCalls, replay.KindCommitments}, f.Kinds); diff != "" {
				t.Errorf("%s kinds (-want +got):\n%s", f.Input, diff)
			}
			if diff := cmp.Diff([]string{"check_warranty", "create_ticket", "send_email"}, f.Baseline.View.Calls); diff != "" {
				t.Errorf("%s baseline calls (-want +got):\n%s", f.Input, diff)
			}
			if diff := cmp.Diff([]string{"check_warranty", "send_email"}, f.New.View.Calls); diff != "" {
				t.Errorf("%s new calls (-want +got):\n%s", f.Input, diff)
			}
			if f.Type != "flip" || f.New.View.Status != "replied" || f.New.View.ReplyMode != "send" {
				t.Errorf("%s: type %s, status %s, reply mode %s", f.Input, f.Type, f.New.View.Status, f.New.View.ReplyMode)
			}
		}
		if diff := cmp.Diff(validWarrantyInputs, inputs); diff != "" {
			t.Errorf("flipped inputs (-want +got):\n%s", diff)
		}
		want := replay.Summary{Type: replay.TypeSummary, Emails: len(files), Flips: 7, ByKind: map[replay.Kind]int{replay.KindTicket: 7, replay.KindCalls: 7, replay.KindCommitments: 7}, Runs: 1, Baseline: shipped}
		if diff := cmp.Diff(want, got.summary); diff != "" {
			t.Errorf("summary (-want +got):\n%s", diff)
		}
	})

	t.Run("the same instructions flip nothing", func(t *testing.T) {
		args := append(append(common, "--instructions", shipped, "--baseline", shipped), files...)
		code, stdout, stderr := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
		}
		if !strings.Contains(stdout, "Replay: 15 email(s), 0 flipped") {
			t.Errorf("stdout:\n%s", stdout)
		}
	})

	t.Run("the human-readable report says the ticket is no longer opened", func(t *testing.T) {
		args := append(append(common, "--instructions", noTicket, "--baseline", shipped), files[0])
		code, stdout, _ := runCLI(t, "", args...)
		if code != exitFlipped {
			t.Fatalf("exit %d", code)
		}
		for _, want := range []string{"01-valid-warranty-pl.eml  ticket, calls, commitments", "before:  valid-warranty, replied; check_warranty, create_ticket, send_email; reply send; decision guarantee (repair, replacement); commits ticket",
			"after:   valid-warranty, replied; check_warranty, send_email; reply send; decision guarantee (repair, replacement); commits none", "no ticket would be opened any more", "Replay: 1 email(s), 1 flipped (calls 1, commitments 1, ticket 1)"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
		}
	})

	t.Run("a policy without statutory liability flips the decision and the commitments", func(t *testing.T) {
		statutory := filepath.Join("../../examples/inbox", "15-statutory-pl.eml")
		args := append(common, "--json", "--instructions", shipped, "--baseline", noStatutoryInstructions(t), statutory)
		code, stdout, stderr := runCLI(t, "", args...)
		if code != exitFlipped {
			t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFlipped, stderr)
		}
		got := decodeReplay(t, stdout)
		if len(got.flips) != 1 {
			t.Fatalf("flips %+v, want one", got.flips)
		}
		f := got.flips[0]
		// Under the shipped policy the statutory claim also opens a repair
		// ticket, which the baseline's paid repair quote does not.
		if diff := cmp.Diff([]replay.Kind{replay.KindTicket, replay.KindCalls, replay.KindDecision, replay.KindCommitments}, f.Kinds); diff != "" {
			t.Errorf("kinds (-want +got):\n%s", diff)
		}
		wantBase := &replay.Decision{Basis: decision.None, Remedies: []decision.Remedy{decision.PaidRepairQuote}}
		wantNew := &replay.Decision{Basis: decision.Statutory, Remedies: []decision.Remedy{decision.Repair, decision.Replacement, decision.PriceReduction, decision.Refund}}
		if diff := cmp.Diff(wantBase, f.Baseline.View.Decision); diff != "" {
			t.Errorf("baseline decision (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantNew, f.New.View.Decision); diff != "" {
			t.Errorf("new decision (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]decision.Commitment{decision.CommitPaidRepairQuote}, f.Baseline.View.Commitments); diff != "" {
			t.Errorf("baseline commitments (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]decision.Commitment{decision.CommitRepair, decision.CommitReplacement, decision.Ticket}, f.New.View.Commitments); diff != "" {
			t.Errorf("new commitments (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[replay.Kind]int{replay.KindTicket: 1, replay.KindCalls: 1, replay.KindDecision: 1, replay.KindCommitments: 1}, got.summary.ByKind); diff != "" {
			t.Errorf("flips by kind (-want +got):\n%s", diff)
		}
	})

	t.Run("an mbox is replayed message by message", func(t *testing.T) {
		mb := filepath.Join(t.TempDir(), "inbox.mbox")
		var b strings.Builder
		for _, f := range files[:3] { // 01 and 02 flip, 03 (expired) does not
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("From archive@example.com Mon Jan  5 10:00:00 2026\n")
			b.WriteString(strings.ReplaceAll(string(raw), "\r\n", "\n"))
			b.WriteString("\n")
		}
		if err := os.WriteFile(mb, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append(common, "--json", "--instructions", noTicket, "--baseline", shipped, mb)
		code, stdout, stderr := runCLI(t, "", args...)
		if code != exitFlipped {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		got := decodeReplay(t, stdout)
		var inputs []string
		for _, f := range got.flips {
			inputs = append(inputs, f.Input)
		}
		if diff := cmp.Diff([]string{mb + "#1", mb + "#2"}, inputs); diff != "" {
			t.Errorf("flipped (-want +got):\n%s", diff)
		}
		if got.summary.Emails != 3 || got.summary.Flips != 2 {
			t.Errorf("summary %+v, want 3 emails, 2 flips", got.summary)
		}
	})

	t.Run("usage errors", func(t *testing.T) {
		for _, args := range [][]string{
			{"replay", "--offline", "--warranty-csv", "../../examples/warranty.csv", "--baseline", shipped, files[0]},                                        // no --instructions
			{"replay", "--offline", "--warranty-csv", "../../examples/warranty.csv", "--instructions", noTicket, files[0]},                                   // no baseline
			{"replay", "--offline", "--warranty-csv", "../../examples/warranty.csv", "--instructions", noTicket, "--baseline", shipped},                      // no input
			{"replay", "--offline", "--warranty-csv", "../../examples/warranty.csv", "--instructions", noTicket, "--baseline", shipped, "-k", "0", files[0]}, // bad -k
			{"replay", "--offline", "--warranty-csv", "../../examples/warranty.csv", "--instructions", noTicket, "--baseline", "/nonexistent", files[0]},
		} {
			if code, _, stderr := runCLI(t, "", args...); code != exitUsage {
				t.Errorf("%v: exit %d, want %d; stderr:\n%s", args[5:], code, exitUsage, stderr)
			}
		}
	})

	t.Run("an unreadable input exits 1 and is named", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "gone.eml")
		args := append(common, "--instructions", shipped, "--baseline", shipped, files[0], missing)
		code, _, stderr := runCLI(t, "", args...)
		if code != exitFailed || !strings.Contains(stderr, "gone.eml") {
			t.Errorf("exit %d, want %d naming gone.eml; stderr:\n%s", code, exitFailed, stderr)
		}
	})
}

// TestReplayLedgerBaseline records what the shipped instructions really did
// (not a dry run: tickets opened, replies written, the angry customer
// escalated and taken over) in a watch ledger, then replays the emails
// without --baseline: the ledger's outcomes are the baseline. The same
// instructions flip nothing, escalation included; the policy change flips
// exactly the valid-warranty emails.
func TestReplayLedgerBaseline(t *testing.T) {
	noDefaultConfig(t)
	files := sampleInbox(t)
	dir := t.TempDir()
	args := append([]string{"process", "--json", "--warranty-csv", "../../examples/warranty.csv", "--staff", "kierownik@example.com",
		"--tickets-db", filepath.Join(dir, "recorded.db"), "--outbox", filepath.Join(dir, "outbox")}, files...)
	code, stdout, stderr := runCLI(t, "", args...)
	outs := decodeOutcomes(t, stdout)
	if code != 0 || len(outs) != len(files) {
		t.Fatalf("process: exit %d, %d outcomes; stderr:\n%s", code, len(outs), stderr)
	}
	escalated := 0
	for _, o := range outs {
		if o.DryRun {
			t.Fatalf("%s: the recorded outcome is a dry run", o.File)
		}
		if o.Escalated {
			escalated++
		}
	}
	if escalated != 1 {
		t.Fatalf("%d recorded outcomes escalated, want 1 (14-angry-customer-en.eml)", escalated)
	}
	ctx := context.Background()
	ledgerPath := filepath.Join(dir, "ledger.db")
	l, err := ledger.Open(ctx, ledger.Config{Path: ledgerPath})
	if err != nil {
		t.Fatal(err)
	}
	// Every email but the job question is in the ledger with its outcome.
	for i, o := range outs {
		if filepath.Base(o.File) == "11-job-question.eml" {
			continue
		}
		e := ledger.Entry{Loc: ledger.Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: uint32(i + 1)},
			Key: o.Key, MessageID: o.MessageID, Sender: o.From, Subject: o.Subject,
			State: ledger.StateOf(o.Status), Reason: o.Reason, Scenario: o.Scenario, Attempts: 1}
		if err := l.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(o)
		if err := l.SetOutcome(ctx, e.Loc, js, "", ledger.Usage{}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	// A ledger in rollback-journal mode (as a restored copy may be): a
	// writer would turn it back to WAL, which changes the file's header.
	db, err := sql.Open("sqlite", ledgerPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA journal_mode=DELETE"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, err := os.ReadFile(ledgerPath)
	if err != nil {
		t.Fatal(err)
	}
	runReplayCLI := func(instructions string, extra ...string) (int, string, string) {
		args := append([]string{"replay", "--offline", "--json", "--warranty-csv", "../../examples/warranty.csv", "--staff", "kierownik@example.com",
			"--tickets-db", filepath.Join(dir, "none.db"), "--instructions", instructions}, extra...)
		return runCLI(t, "", append(args, files...)...)
	}

	// The same instructions flip nothing, escalation included: a dry-run
	// notice would tell staff, so the reply still promises the callback.
	unchanged := replay.Summary{Type: replay.TypeSummary, Emails: len(files), ByKind: map[replay.Kind]int{}, NoBaseline: 1, Runs: 1, Baseline: "ledger"}
	t.Run("the same instructions flip nothing, escalation included", func(t *testing.T) {
		code, stdout, stderr := runReplayCLI(shippedInstructions(t), "--ledger", ledgerPath)
		if code != 0 {
			t.Fatalf("replay: exit %d, want 0; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		if diff := cmp.Diff(unchanged, decodeReplay(t, stdout).summary); diff != "" {
			t.Errorf("summary (-want +got):\n%s", diff)
		}
	})

	t.Run("a policy that stops opening tickets", func(t *testing.T) {
		code, stdout, stderr := runReplayCLI(noTicketInstructions(t), "--ledger", ledgerPath)
		if code != exitFlipped {
			t.Fatalf("replay: exit %d, want %d; stderr:\n%s", code, exitFlipped, stderr)
		}
		got := decodeReplay(t, stdout)
		var inputs []string
		for _, f := range got.flips {
			inputs = append(inputs, filepath.Base(f.Input))
			if f.Baseline.Detail != "recorded by watch" {
				t.Errorf("%s: baseline detail %q", f.Input, f.Baseline.Detail)
			}
		}
		// The valid-warranty replies no longer name a ticket either.
		if diff := cmp.Diff(validWarrantyInputs, inputs); diff != "" {
			t.Errorf("flipped (-want +got):\n%s", diff)
		}
		want := replay.Summary{Type: replay.TypeSummary, Emails: len(files), Flips: 7, ByKind: map[replay.Kind]int{replay.KindTicket: 7, replay.KindCalls: 7, replay.KindCommitments: 7}, NoBaseline: 1, Runs: 1, Baseline: "ledger"}
		if diff := cmp.Diff(want, got.summary); diff != "" {
			t.Errorf("summary (-want +got):\n%s", diff)
		}
	})

	t.Run("the same ledger found through the watch configuration", func(t *testing.T) {
		cfg := filepath.Join(dir, "triage.yaml")
		if err := os.WriteFile(cfg, []byte("ledger: ledger.db\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runReplayCLI(noTicketInstructions(t), "--config", cfg)
		if code != exitFlipped || decodeReplay(t, stdout).summary.Flips != 7 {
			t.Errorf("replay --config: exit %d, summary %+v; stderr:\n%s", code, decodeReplay(t, stdout).summary, stderr)
		}
	})

	// Replay opened the ledger read-only: not a byte of it changed, and no
	// journal was left beside it.
	after, err := os.ReadFile(ledgerPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("replay changed the ledger file")
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if fileExists(ledgerPath + suffix) {
			t.Errorf("replay left %s%s behind", ledgerPath, suffix)
		}
	}

	// --ledger is the ledger setting of watch and the ledger commands:
	// $TRIAGE_LEDGER names it too.
	t.Setenv("TRIAGE_LEDGER", ledgerPath)
	code, stdout, stderr = runReplayCLI(shippedInstructions(t))
	if got := decodeReplay(t, stdout).summary; code != 0 || !cmp.Equal(unchanged, got) {
		t.Errorf("replay with $TRIAGE_LEDGER: exit %d, summary %+v, want %+v; stderr:\n%s", code, got, unchanged, stderr)
	}
}
