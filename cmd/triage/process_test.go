package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/decision"
	"triage/internal/processor"
)

// runCLI runs the CLI in-process, offline, with fresh stores.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "")
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func decodeOutcomes(t *testing.T, s string) []processor.Outcome {
	t.Helper()
	var outs []processor.Outcome
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var o processor.Outcome
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		outs = append(outs, o)
	}
	return outs
}

// TestProcessSampleInbox runs `triage process --json` over the sample inbox
// with the offline model and checks every outcome and every written reply.
func TestProcessSampleInbox(t *testing.T) {
	dir := t.TempDir()
	files, err := filepath.Glob("../../examples/inbox/*.eml")
	if err != nil || len(files) < 8 {
		t.Fatalf("sample inbox: %v files, err %v", len(files), err)
	}
	args := append([]string{"process", "--json", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", filepath.Join(dir, "outbox"), "--concurrency", "3",
		"--staff", "kierownik@example.com"}, files...)
	code, stdout, stderr := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	if !strings.Contains(stderr, "offline model") {
		t.Errorf("stderr does not say the offline model was used: %s", stderr)
	}
	// The escalation is a reply whose conversation a person owns now:
	// the totals say so, as watch's ledger does (needs_human, escalated).
	if !strings.Contains(stderr, "15 email(s): 13 replied (1 escalated to a person), 0 drafted, 2 skipped, 0 failed;") {
		t.Errorf("stderr's totals do not count the escalation apart: %s", stderr)
	}

	type want struct {
		status, reason, scenario, method string
		firstTurn                        bool // detection.first_turn
		calls                            []string
		serials                          []string
		body                             []string // phrases the reply body must contain
	}
	wants := map[string]want{
		"01-valid-warranty-pl.eml": {status: "replied", scenario: "valid-warranty", method: "rules",
			calls: []string{"check_warranty", "create_ticket", "send_email"}, serials: []string{"SN-48213-PL"},
			body: []string{"SN-48213-PL", "2027-05-31", "TKT-", "zastępczy model bez AI"}},
		"02-valid-warranty-en.eml": {status: "replied", scenario: "valid-warranty", method: "rules",
			calls: []string{"check_warranty", "create_ticket", "send_email"}, serials: []string{"SN12345"},
			body: []string{"SN12345", "2027-12-31", "TKT-", "warranty"}},
		"03-expired-warranty-pl.eml": {status: "replied", scenario: "invalid-warranty", method: "rules",
			calls: []string{"check_warranty", "send_email"}, serials: []string{"SN98765"},
			body: []string{"SN98765", "wygasła", "2024-06-15"}},
		"04-unknown-serial-en.eml": {status: "replied", scenario: "valid-warranty", method: "rules",
			calls: []string{"check_warranty", "send_email"}, serials: []string{"SN55555"},
			body: []string{"SN55555", "not found"}},
		"05-no-serial-pl.eml": {status: "replied", scenario: "missing-info", method: "rules",
			calls: []string{"send_email"}, body: []string{"numeru seryjnego"}},
		"06-out-of-office.eml": {status: "skipped", reason: "auto_submitted"},
		"07-newsletter.eml":    {status: "skipped", reason: "list"},
		"08-html-windows-1250.eml": {status: "replied", scenario: "valid-warranty", method: "rules",
			calls: []string{"check_warranty", "create_ticket", "send_email"}, serials: []string{"SN-70412-PL"},
			body: []string{"SN-70412-PL"}},
		"09-pdf-attachment.eml": {status: "replied", scenario: "valid-warranty", method: "rules",
			calls: []string{"check_warranty", "create_ticket", "send_email"}, serials: []string{"SN-61042-PL"}},
		"10-serial-in-quoted-history.eml": {status: "replied", scenario: "valid-warranty", method: "rules",
			calls: []string{"check_warranty", "create_ticket", "send_email"}, serials: []string{"SN-30117-PL"}},
		// The rules are unsure: the model chooses in the email's first
		// turn (method model, first_turn true).
		"11-job-question.eml": {status: "replied", scenario: "out-of-scope", method: "model", firstTurn: true,
			calls: []string{"send_email"}},
		"12-prompt-injection.eml": {status: "replied", scenario: "valid-warranty", method: "rules",
			calls: []string{"check_warranty", "create_ticket", "send_email"}, serials: []string{"SN-72231-PL"}},
		// The offline model knows no product-question: it follows the
		// declarations, looks the subject's key word up in the manuals
		// (our MCP server) and quotes the answer.
		"14-angry-customer-en.eml": {status: "replied", scenario: "escalation", method: "rules",
			calls: []string{"notify_staff", "send_email"}},
		"13-product-question-en.eml": {status: "replied", scenario: "product-question", method: "rules",
			calls: []string{"search_manual", "send_email"}, body: []string{"DESCALE light", "never vinegar"}},
		// The guarantee expired, the purchase is within the statutory
		// period: triage's decision is statutory, a repair ticket opens and
		// the reply follows the decision.
		"15-statutory-pl.eml": {status: "replied", scenario: "valid-warranty", method: "rules",
			calls: []string{"check_warranty", "create_ticket", "send_email"}, serials: []string{"SN-24031-PL"},
			body: []string{"SN-24031-PL", "wygasła 2026-03-31", "odpowiedzialnością sprzedawcy", "naprawimy urządzenie lub wymienimy"}},
	}
	decisions := map[string]decision.Basis{
		"01-valid-warranty-pl.eml": decision.Guarantee, "03-expired-warranty-pl.eml": decision.None,
		"04-unknown-serial-en.eml": decision.NeedsProof, "15-statutory-pl.eml": decision.Statutory,
		"05-no-serial-pl.eml": "",
	}

	outs := decodeOutcomes(t, stdout)
	if len(outs) != len(files) {
		t.Fatalf("%d outcomes for %d inputs", len(outs), len(files))
	}
	// The JSON contract: detection.method is one of rules, model and
	// fallback; first_turn is there only when the model chose in the first
	// turn.
	for i, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var raw struct {
			Detection map[string]any `json:"detection"`
		}
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		base := filepath.Base(files[i])
		want := map[string]any{"method": wants[base].method, "reason": raw.Detection["reason"]}
		if wants[base].firstTurn {
			want["first_turn"] = true
		}
		if diff := cmp.Diff(want, raw.Detection); diff != "" {
			t.Errorf("%s: detection JSON (-want +got):\n%s", base, diff)
		}
	}
	for i, o := range outs {
		if o.File != files[i] {
			t.Errorf("outcome %d is for %s, want %s (input order)", i, o.File, files[i])
		}
		base := filepath.Base(o.File)
		w, ok := wants[base]
		if !ok {
			t.Errorf("no expectation for %s; add it", base)
			continue
		}
		var calls []string
		for _, c := range o.FunctionCalls {
			if !c.OK || c.Blocked {
				t.Errorf("%s: call %s not ok: %+v", base, c.Name, c.Error)
			}
			calls = append(calls, c.Name)
		}
		if w.serials == nil {
			w.serials = []string{}
		}
		got := []any{string(o.Status), string(o.Reason), o.Scenario, string(o.Detection.Method), calls, o.SerialNumbers}
		exp := []any{w.status, w.reason, w.scenario, w.method, w.calls, w.serials}
		if diff := cmp.Diff(exp, got); diff != "" {
			t.Errorf("%s: [status reason scenario method calls serials] (-want +got):\n%s", base, diff)
		}
		if want, ok := decisions[base]; ok {
			var basis decision.Basis
			if o.Decision != nil {
				basis = o.Decision.Basis
			}
			if basis != want || (o.Decision != nil && o.Decision.AnswerBy.IsZero()) {
				t.Errorf("%s: decision %+v, want basis %q with an answer_by", base, o.Decision, want)
			}
		}
		if o.MessageID == "" || o.From == "" || o.Model != "offline" {
			t.Errorf("%s: message_id %q from %q model %q", base, o.MessageID, o.From, o.Model)
		}
		if o.Status != triage.StatusReplied {
			if o.Reply != nil || o.ModelCalls != 0 {
				t.Errorf("%s: skipped mail got a reply or model calls: %+v, %d", base, o.Reply, o.ModelCalls)
			}
			continue
		}
		checkReply(t, base, o, w.body)
		if base == "14-angry-customer-en.eml" && (!o.Escalated || o.TicketID == "") {
			t.Errorf("%s: escalated %v, ticket %q; want escalated on a ticket", base, o.Escalated, o.TicketID)
		}
	}
}

// checkReply parses the written reply and checks its headers and body.
func checkReply(t *testing.T, base string, o processor.Outcome, phrases []string) {
	t.Helper()
	if o.Reply == nil || o.Reply.Path == "" {
		t.Errorf("%s: replied without a reply file", base)
		return
	}
	f, err := os.Open(o.Reply.Path)
	if err != nil {
		t.Errorf("%s: %v", base, err)
		return
	}
	defer f.Close()
	mr, err := mail.CreateReader(f)
	if err != nil {
		t.Errorf("%s: reply does not parse: %v", base, err)
		return
	}
	h := mr.Header
	to, _ := h.AddressList("To")
	from, _ := h.AddressList("From")
	subj, _ := h.Subject()
	mid, _ := h.MessageID()
	irt, _ := h.MsgIDList("In-Reply-To")
	refs, _ := h.MsgIDList("References")
	date, _ := h.Date()
	inbound := strings.Trim(o.MessageID, "<>")
	switch {
	case len(to) != 1 || to[0].Address != o.From:
		t.Errorf("%s: To %v, want only %s", base, to, o.From)
	case len(from) != 1 || from[0].Address != "serwis@example.com":
		t.Errorf("%s: From %v", base, from)
	case !strings.HasPrefix(subj, "Re: ") || strings.HasPrefix(subj, "Re: Re:"):
		t.Errorf("%s: Subject %q", base, subj)
	case "<"+mid+">" != o.Reply.MessageID:
		t.Errorf("%s: Message-ID %q, outcome says %q", base, mid, o.Reply.MessageID)
	case len(irt) != 1 || irt[0] != inbound:
		t.Errorf("%s: In-Reply-To %v, want %s", base, irt, inbound)
	case len(refs) == 0 || refs[len(refs)-1] != inbound:
		t.Errorf("%s: References %v must end with %s", base, refs, inbound)
	case h.Get("Auto-Submitted") != "auto-replied":
		t.Errorf("%s: Auto-Submitted %q", base, h.Get("Auto-Submitted"))
	case h.Get("X-Auto-Response-Suppress") != "All":
		t.Errorf("%s: X-Auto-Response-Suppress %q", base, h.Get("X-Auto-Response-Suppress"))
	case date.IsZero():
		t.Errorf("%s: no Date", base)
	}
	p, err := mr.NextPart()
	if err != nil {
		t.Errorf("%s: reply body: %v", base, err)
		return
	}
	ct, params, _ := p.Header.(*mail.InlineHeader).ContentType()
	if ct != "text/plain" || !strings.EqualFold(params["charset"], "utf-8") {
		t.Errorf("%s: Content-Type %s %v", base, ct, params)
	}
	var body bytes.Buffer
	body.ReadFrom(p.Body)
	for _, ph := range phrases {
		if !strings.Contains(body.String(), ph) {
			t.Errorf("%s: reply body lacks %q:\n%s", base, ph, body.String())
		}
	}
}

func TestProcessExitCodes(t *testing.T) {
	valid, err := os.ReadFile("../../examples/inbox/01-valid-warranty-pl.eml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		stdin    string
		args     []string
		wantCode int
		wantErr  string // substring of stderr
		wantOut  []string
		// wantBlocked: a call refused with this code must be recorded.
		wantBlocked string
	}{
		{name: "stdin replied", stdin: string(valid), args: []string{"-"}, wantCode: 0, wantOut: []string{"replied"}},
		{name: "skipped only", args: []string{"../../examples/inbox/06-out-of-office.eml"}, wantCode: 0, wantOut: []string{"skipped"}},
		{name: "missing file fails, others still processed", args: []string{"nope.eml", "../../examples/inbox/06-out-of-office.eml"}, wantCode: 1,
			wantOut: []string{"failed", "skipped"}},
		{name: "no sender fails", stdin: "To: serwis@example.com\r\nSubject: x\r\n\r\nSN12345\r\n", args: []string{"-"}, wantCode: 1, wantOut: []string{"failed"}},
		{name: "model faults exhausted: email_not_sent", stdin: string(valid), args: []string{"--offline-faults", "malformed_call,malformed_call", "-"}, wantCode: 1, wantOut: []string{"failed"}},
		{name: "model fault recovered", stdin: string(valid), args: []string{"--offline-faults", "503,empty", "-"}, wantCode: 0, wantOut: []string{"replied"}},
		{name: "model mails a third party: refused, then replies to the customer", stdin: string(valid), args: []string{"--offline-faults", "third_party", "-"}, wantCode: 0,
			wantOut: []string{"replied"}, wantBlocked: "recipient_not_allowed"},
		{name: "bounce without usable sender is skipped", stdin: "From: <>\r\nReturn-Path: <>\r\nTo: serwis@example.com\r\nSubject: Undelivered\r\n\r\nSN12345\r\n", args: []string{"-"}, wantCode: 0, wantOut: []string{"skipped"}},
		{name: "no input", args: nil, wantCode: 2, wantErr: "no input"},
		{name: "unknown flag", args: []string{"--bogus", "x.eml"}, wantCode: 2, wantErr: "unknown flag"},
		{name: "bad registry", args: []string{"--warranty-csv", "nope.csv", "x.eml"}, wantCode: 2, wantErr: "nope.csv"},
		{name: "bad instructions dir", args: []string{"--instructions", "nope", "x.eml"}, wantCode: 2, wantErr: "--instructions"},
		{name: "bad fault", args: []string{"--offline-faults", "meteor", "x.eml"}, wantCode: 2, wantErr: "meteor"},
		{name: "bad concurrency", args: []string{"--concurrency", "0", "x.eml"}, wantCode: 2, wantErr: "--concurrency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each case its own outbox and ticket store: an email answered
			// before would be that reply again, without running anything.
			dir := t.TempDir()
			common := []string{"--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "t.db"), "--outbox", filepath.Join(dir, "out")}
			args := append(append([]string{"process", "--json"}, common...), tt.args...)
			code, stdout, stderr := runCLI(t, tt.stdin, args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tt.wantCode, stderr)
			}
			if tt.wantErr != "" && !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("stderr lacks %q: %s", tt.wantErr, stderr)
			}
			var statuses []string
			blocked := ""
			for _, o := range decodeOutcomes(t, stdout) {
				statuses = append(statuses, string(o.Status))
				for _, c := range o.FunctionCalls {
					if c.Blocked {
						blocked = string(c.Error.Code)
						if to, _ := c.Args["to"].(string); c.Name == "send_email" && o.Reply != nil && to == o.Reply.To {
							t.Errorf("blocked send_email to the customer: %+v", c)
						}
					}
				}
				if o.Status == triage.StatusFailed && (o.Reason == "" || o.Detail == "") {
					t.Errorf("failed outcome without reason/detail: %+v", o)
				}
			}
			if diff := cmp.Diff(tt.wantOut, statuses); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if blocked != tt.wantBlocked {
				t.Errorf("blocked call code %q, want %q", blocked, tt.wantBlocked)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "check")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, name := range []string{"valid-warranty", "invalid-warranty", "missing-info", "graceful-degradation", "out-of-scope", "check_warranty(serial_number)"} {
		if !strings.Contains(stdout, name) {
			t.Errorf("check output lacks %q", name)
		}
	}
	bad := t.TempDir()
	os.MkdirAll(filepath.Join(bad, "scenarios"), 0o755)
	os.WriteFile(filepath.Join(bad, "main.md"), []byte("rules"), 0o644)
	os.WriteFile(filepath.Join(bad, "scenarios", "x.md"), []byte("---\nname: y\ndescription: d\navailable_functions: []\n---\nbody\n"), 0o644)
	code, _, stderr = runCLI(t, "", "check", "--instructions", bad)
	if code != 2 || !strings.Contains(stderr, "scenarios/x.md") || !strings.Contains(stderr, "name") {
		t.Errorf("broken dir: exit %d, stderr %s", code, stderr)
	}
}

// TestProcessAllBoundedWindow: while the first input is slow, only a
// bounded window of later inputs is started (their outcomes are held until
// the first is printed); everything is still emitted once, in input order.
func TestProcessAllBoundedWindow(t *testing.T) {
	const n, count = 2, 200
	window := reorderWindow(n)
	var mu sync.Mutex
	started := 0
	startedWhileFirstRan := -1
	work := func(i int) processor.Outcome {
		mu.Lock()
		started++
		mu.Unlock()
		if i == 0 {
			// Wait until the others have filled what they may, and a
			// little longer, so an unbounded runner would show itself.
			for {
				mu.Lock()
				s := started
				mu.Unlock()
				if s >= window {
					break
				}
				time.Sleep(time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond)
			mu.Lock()
			startedWhileFirstRan = started
			mu.Unlock()
		}
		return processor.Outcome{File: fmt.Sprint(i)}
	}
	var order []int
	processAll(count, n, work, func(i int, out processor.Outcome) {
		if out.File != fmt.Sprint(i) {
			t.Errorf("emit(%d) got the outcome of %s", i, out.File)
		}
		order = append(order, i)
	})
	if startedWhileFirstRan > window {
		t.Errorf("%d inputs started while the first was still running; want at most the window, %d", startedWhileFirstRan, window)
	}
	want := make([]int, count)
	for i := range want {
		want[i] = i
	}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("emit order (-want +got):\n%s", diff)
	}
}

// TestProcessTextDetection: the human summary says how the scenario was
// chosen, the first turn included.
func TestProcessTextDetection(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile("../../examples/inbox/11-job-question.eml")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, string(raw), "process", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", filepath.Join(dir, "out"), "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout+stderr, "scenario out-of-scope (model, first turn: out-of-scope: ") {
		t.Errorf("the summary does not say the model chose in the first turn:\n%s%s", stdout, stderr)
	}
}
