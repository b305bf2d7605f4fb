package main

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/replay"
	"triage/internal/testkit/geminitest"
)

// liveRun is what one scripted model run of 01-valid-warranty-pl.eml
// does once the pipeline looked the warranty up (prefetch): open a ticket
// when ticket is set, reply.
func liveRun(ticket bool) []geminitest.Step {
	var steps []geminitest.Step
	if ticket {
		steps = append(steps, geminitest.One(geminitest.Call("c2", "create_ticket",
			geminitest.Obj("serial_number", "SN-48213-PL", "customer_email", "anna.nowak@example.pl", "priority", "normal"))))
	}
	return append(steps, geminitest.One(geminitest.Call("c3", "send_email", geminitest.Obj("to", "anna.nowak@example.pl",
		"subject", "Re: Reklamacja – ekspres nie grzeje wody", "body", "Dzień dobry, gwarancja urządzenia SN-48213-PL jest ważna do 2027-05-31.", "decision", "guarantee"))))
}

// TestReplayRunsLive: with a live model each side runs -k times (here a
// scripted Gemini server on loopback, through the real genai SDK). A side
// whose runs disagree makes the email unstable, never a flip; a change that
// every run of both sides agrees on is a flip, reported with its counts.
func TestReplayRunsLive(t *testing.T) {
	noDefaultConfig(t)
	shipped := shippedInstructions(t)
	input := "../../examples/inbox/01-valid-warranty-pl.eml"
	runReplayCLI := func(t *testing.T, runs [][]geminitest.Step, extra ...string) (int, string, string) {
		t.Helper()
		srv := geminitest.New(t, slices.Concat(runs...)...)
		t.Setenv("GEMINI_API_KEY", geminitest.APIKey)
		t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL())
		args := append([]string{"replay", "-k", "3", "--concurrency", "1", "--warranty-csv", "../../examples/warranty.csv",
			"--tickets-db", filepath.Join(t.TempDir(), "none.db"), "--instructions", shipped, "--baseline", shipped}, extra...)
		var out, errb bytes.Buffer
		code := run(context.Background(), append(args, input), strings.NewReader(""), &out, &errb)
		if n := srv.Left(); n != 0 {
			t.Errorf("%d scripted answers unused", n)
		}
		return code, out.String(), errb.String()
	}

	t.Run("one run of one side differs: unstable, not a flip", func(t *testing.T) {
		// The new side runs first (3 runs), then the baseline (3 runs).
		code, stdout, stderr := runReplayCLI(t, [][]geminitest.Step{liveRun(true), liveRun(true), liveRun(false), liveRun(true), liveRun(true), liveRun(true)}, "--json")
		if code != 0 {
			t.Fatalf("exit %d, want 0 (an unstable email is not a flip); stderr:\n%s", code, stderr)
		}
		got := decodeReplay(t, stdout)
		if len(got.flips) != 1 || got.flips[0].Type != "unstable" {
			t.Fatalf("records %+v, want one unstable", got.flips)
		}
		r := got.flips[0]
		if r.New.Agreed != 2 || r.New.Runs != 3 || r.Baseline.Agreed != 3 || r.Baseline.Runs != 3 {
			t.Errorf("counts: new %d/%d, baseline %d/%d; want 2/3 and 3/3", r.New.Agreed, r.New.Runs, r.Baseline.Agreed, r.Baseline.Runs)
		}
		if diff := cmp.Diff([]string{"check_warranty", "create_ticket", "send_email"}, r.New.View.Calls); diff != "" {
			t.Errorf("the new side's most frequent outcome (-want +got):\n%s", diff)
		}
		want := replay.Summary{Type: replay.TypeSummary, Emails: 1, ByKind: map[replay.Kind]int{}, Unstable: 1, Runs: 3, Baseline: shipped}
		if diff := cmp.Diff(want, got.summary); diff != "" {
			t.Errorf("summary (-want +got):\n%s", diff)
		}
		if !strings.Contains(stderr, "3 run(s) per side") {
			t.Errorf("stderr does not say the runs per side:\n%s", stderr)
		}
	})

	t.Run("every run agrees: a flip, with the counts", func(t *testing.T) {
		code, stdout, stderr := runReplayCLI(t, [][]geminitest.Step{liveRun(false), liveRun(false), liveRun(false), liveRun(true), liveRun(true), liveRun(true)})
		if code != exitFlipped {
			t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFlipped, stderr)
		}
		for _, want := range []string{"01-valid-warranty-pl.eml  ticket, calls",
			"before:  valid-warranty, replied; check_warranty, create_ticket, send_email; reply send; decision guarantee (repair, replacement); commits none [3/3 runs]",
			"after:   valid-warranty, replied; check_warranty, send_email; reply send; decision guarantee (repair, replacement); commits none [3/3 runs]",
			"Replay: 1 email(s), 1 flipped (calls 1, ticket 1); 0 unstable"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
		}
	})
}
