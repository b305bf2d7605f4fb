package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"triage/internal/ledger"
)

// triage check --config reports the complaints of the configuration's
// ledger whose deadline passed without an answer on their merits.
func TestCheckReportsOverdueComplaints(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	cfg := watchConfig(t, dir, "  offline: true\n")
	code, out, stderr := runArgs(t, "check", "--config", cfg)
	if code != 0 || strings.Contains(out, "complaints") {
		t.Fatalf("without a ledger: exit %d, want 0 and no complaint figures\n%s%s", code, out, stderr)
	}
	l, err := ledger.Open(context.Background(), ledger.Config{Path: filepath.Join(dir, "state", "ledger.db")})
	if err != nil {
		t.Fatal(err)
	}
	for uid, received := range map[uint32]time.Time{1: time.Now().Add(-20 * 24 * time.Hour), 2: time.Now()} {
		e := ledger.Entry{Loc: ledger.Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: uid}, Key: "k", State: ledger.StateDrafted,
			Clock: ledger.Clock{Complaint: true, Received: received}}
		if err := l.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	code, out, stderr = runArgs(t, "check", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{"complaints not answered on their merits: 1 open, 1 overdue",
		"warning: 1 consumer complaint(s) passed their deadline without an answer on their merits"} {
		if !strings.Contains(out, want) {
			t.Errorf("check does not say %q:\n%s", want, out)
		}
	}
	code, out, _ = runArgs(t, "check", "--json", "--config", cfg)
	var r checkReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	if r.Complaints == nil || *r.Complaints != (checkComplaints{Open: 1, Overdue: 1}) {
		t.Errorf("complaints = %+v, want 1 open, 1 overdue", r.Complaints)
	}
}

// complaints.answer_days and complaints.notify_days set the watcher's
// complaint clock; notify_days 0 warns nobody, and without staff addresses
// the warning is only logged.
func TestComplaintSettings(t *testing.T) {
	noDefaultConfig(t)
	dir := t.TempDir()
	cfg := watchConfig(t, dir, "  offline: true\n")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, cfg, string(b)+"complaints:\n  answer_days: 30\n  notify_days: 0\n")
	wo, err := loadWatchFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if wo.Complaints != (complaintOptions{AnswerDays: 30, AnswerDaysSet: true, NotifyDays: 0}) {
		t.Errorf("complaints = %+v, want answer_days 30, notify_days 0", wo.Complaints)
	}
	day := 24 * time.Hour
	c := wo.Complaints.watch(nil, "", "example.com", []string{"boss@example.com"}, nil)
	if c.AnswerPeriod != 30*day || c.NotifyBefore >= 0 || c.Notify != nil {
		t.Errorf("watch.Complaints = %+v, want 30 days, no warnings", c)
	}
	c = complaintOptions{AnswerDays: defaultAnswerDays, NotifyDays: defaultNotifyDays}.watch(dryRunSender{}, "s@example.com", "example.com", nil, nil)
	if c.AnswerPeriod != 14*day || c.NotifyBefore != 3*day || c.Notify != nil {
		t.Errorf("defaults without staff = %+v, want 14 days, warned 3 days before, logged only", c)
	}
	if c := (complaintOptions{AnswerDays: 14, NotifyDays: 3}).watch(dryRunSender{}, "s@example.com", "example.com", []string{"boss@example.com"}, nil); c.Notify == nil {
		t.Error("with staff addresses: no Notify")
	}
	writeTestFile(t, cfg, string(b)+"complaints:\n  answer_days: 0\n")
	if code, out, stderr := runArgs(t, "watch", "--config", cfg, "--check"); code != 2 || !strings.Contains(stderr, "answer_days") {
		t.Errorf("answer_days 0: exit %d, want 2 naming answer_days\n%s%s", code, out, stderr)
	}
}
