package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"triage/internal/ledger"
)

// triage ledger --due lists the complaints not answered on their merits,
// overdue ones first and marked, then by time left; --json says the same
// per line.
func TestLedgerDue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	now := time.Now()
	for uid, c := range map[uint32]struct {
		subject string
		clock   ledger.Clock
	}{
		1: {"soon", ledger.Clock{Complaint: true, Received: now.Add(-12 * day)}},
		2: {"overdue", ledger.Clock{Complaint: true, Received: now.Add(-15 * day)}},
		3: {"later", ledger.Clock{Complaint: true, Received: now.Add(-time.Hour)}},
		4: {"answered", ledger.Clock{Complaint: true, Received: now.Add(-time.Hour), OnTheMerits: true}},
		5: {"no complaint", ledger.Clock{}},
	} {
		e := ledger.Entry{Loc: ledger.Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: uid}, Key: "k",
			Subject: c.subject, State: ledger.StateDrafted, Clock: c.clock}
		if err := l.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()

	code, out, stderr := runCLI(t, "", "ledger", "--ledger", path, "--due")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 6 {
		t.Fatalf("want a header, 3 complaints, a blank line and the sum:\n%s", out)
	}
	for i, want := range []string{"OVERDUE 1d0h", "2d0h", "13d23h"} {
		if !strings.HasPrefix(lines[i+1], want+" ") {
			t.Errorf("line %d = %q, want it to start with %q", i+1, lines[i+1], want)
		}
	}
	if !strings.Contains(lines[1], "overdue") || !strings.Contains(lines[2], "soon") || !strings.Contains(lines[3], "later") {
		t.Errorf("order: want overdue, soon, later:\n%s", out)
	}
	if !strings.Contains(out, "complaints not answered on their merits: 3, overdue: 1") {
		t.Errorf("no sum:\n%s", out)
	}

	code, out, stderr = runCLI(t, "", "ledger", "--ledger", path, "--due", "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d\n%s", code, stderr)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var d struct {
			Subject     string `json:"subject"`
			Overdue     bool   `json:"overdue"`
			LeftSeconds int64  `json:"left_seconds"`
			Complaint   struct {
				AnswerBy time.Time `json:"answer_by"`
			} `json:"complaint"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if d.Complaint.AnswerBy.IsZero() || d.Overdue != (d.LeftSeconds <= 0) {
			t.Errorf("line %s: want answer_by, and overdue when no time is left", line)
		}
		got = append(got, d.Subject)
	}
	if strings.Join(got, ",") != "overdue,soon,later" {
		t.Errorf("--json order = %v, want overdue, soon, later", got)
	}

	if code, _, _ := runCLI(t, "", "ledger", "--ledger", path, "--due", "--replies"); code != 2 {
		t.Errorf("--due --replies: exit %d, want 2", code)
	}
}
