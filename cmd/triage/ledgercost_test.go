package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"triage"
	"triage/internal/ledger"
)

// costLedger writes a ledger holding three handled messages with their
// usage: two valid-warranty emails answered by Flash (one of them failed),
// one the offline model answered.
func costLedger(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i, m := range []struct {
		state    ledger.State
		scenario string
		u        ledger.Usage
	}{
		{ledger.StateReplied, "valid-warranty", ledger.Usage{Model: "gemini-2.5-flash", Calls: 3, Prompt: 9000, Cached: 6000, Output: 200}},
		{ledger.StateFailed, "valid-warranty", ledger.Usage{Model: "gemini-2.5-flash", Calls: 1, Prompt: 3000, Output: 100}},
		{ledger.StateReplied, "no-serial", ledger.Usage{Model: "offline", Calls: 1, Prompt: 2000, Output: 50}},
	} {
		loc := ledger.Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: uint32(i + 1)}
		if _, err := l.Begin(ctx, ledger.Entry{Loc: loc, Key: triage.Key(fmt.Sprint("k", i)), Sender: "jan@example.com"}); err != nil {
			t.Fatal(err)
		}
		if err := l.SetOutcome(ctx, loc, []byte(`{}`), "", m.u); err != nil {
			t.Fatal(err)
		}
		if err := l.Finish(ctx, loc, m.state, "", m.scenario); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLedgerStatsCost: --cost turns each scenario's tokens into money at
// the configuration's prices (cached input at its own price), per month,
// with the cost per 1,000 emails and per resolved email; a model without a
// price has no cost; the plain stats show the tokens per email.
func TestLedgerStatsCost(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "ledger.db")
	costLedger(t, db)
	cfg := filepath.Join(dir, "triage.yaml")
	writeTestFile(t, cfg, "ledger: "+db+"\nprices:\n  gemini-2.5-flash: {input: 0.30, cached_input: 0.03, output: 2.50}\n")

	code, stdout, stderr := runArgs(t, "ledger", "stats", "--config", cfg, "--cost", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	byScenario := map[string]costLine{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var l costLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		byScenario[l.Scenario] = l
	}
	vw := byScenario["valid-warranty"]
	want := (3000*0.30 + 6000*0.03 + 200*2.50 + 3000*0.30 + 100*2.50) / 1e6
	if vw.Emails != 2 || vw.Resolved != 1 || vw.ModelCalls != 4 || vw.Cost == nil || math.Abs(*vw.Cost-want) > 1e-12 ||
		math.Abs(*vw.CostPer1000-500*want) > 1e-9 || math.Abs(*vw.CostPerResolved-want) > 1e-12 {
		t.Errorf("valid-warranty line %+v; want cost %g", vw, want)
	}
	if ns := byScenario["no-serial"]; ns.Model != "offline" || ns.Cost != nil {
		t.Errorf("no-serial line %+v; want no cost (no price for offline)", ns)
	}

	code, stdout, _ = runArgs(t, "ledger", "stats", "--config", cfg, "--cost")
	if code != 0 || !strings.Contains(stdout, "gemini-2.5-flash: input 0.3, cached input 0.03, output 2.5 per 1M tokens") ||
		!strings.Contains(stdout, fmt.Sprintf("%.4f", want)) || !strings.Contains(stdout, "No price for offline") {
		t.Errorf("--cost: exit %d, stdout:\n%s", code, stdout)
	}
	code, stdout, _ = runArgs(t, "ledger", "stats", "--config", cfg)
	if code != 0 || !strings.Contains(stdout, "PROMPT TOKENS/EMAIL") || !strings.Contains(stdout, "6000") || !strings.Contains(stdout, "50%") {
		t.Errorf("stats: exit %d, stdout:\n%s", code, stdout)
	}
}

// TestLedgerStatsCostNeedsPrices: --cost without prices, and a negative
// price, are usage errors that say what to fix.
func TestLedgerStatsCostNeedsPrices(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "ledger.db")
	costLedger(t, db)
	code, _, stderr := runArgs(t, "ledger", "stats", "--ledger", db, "--cost")
	if code != exitUsage || !strings.Contains(stderr, "no prices") {
		t.Errorf("no prices: exit %d, stderr %q", code, stderr)
	}
	cfg := filepath.Join(dir, "triage.yaml")
	writeTestFile(t, cfg, "ledger: "+db+"\nprices:\n  gemini-2.5-flash: {input: -0.30, output: 2.50}\n")
	code, _, stderr = runArgs(t, "ledger", "stats", "--config", cfg, "--cost")
	if code != exitUsage || !strings.Contains(stderr, "gemini-2.5-flash.input is -0.3") {
		t.Errorf("negative price: exit %d, stderr %q", code, stderr)
	}
	writeTestFile(t, cfg, "ledger: "+db+"\nprices:\n  gemini-2.5-flash: {input: 0.30, cache: 0.03}\n")
	code, _, stderr = runArgs(t, "ledger", "stats", "--config", cfg, "--cost")
	if code != exitUsage || !strings.Contains(stderr, "cache") {
		t.Errorf("unknown price field: exit %d, stderr %q", code, stderr)
	}
}
