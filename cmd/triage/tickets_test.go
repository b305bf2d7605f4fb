package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/clients/tickets"
)

// TestTicketsCommand: process opens tickets, `tickets` lists and shows them
// and takes a conversation over; the follow-up is then left for the person
// (skipped, human_owner) and answered again after release.
func TestTicketsCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	proc := func(files ...string) string {
		t.Helper()
		args := append([]string{"process", "--json", "--warranty-csv", "../../examples/warranty.csv", "--staff", "kierownik@example.com",
			"--tickets-db", db, "--outbox", filepath.Join(dir, "outbox")}, files...)
		code, stdout, stderr := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("process: exit %d\n%s", code, stderr)
		}
		return stdout
	}
	first := decodeOutcomes(t, proc("../../examples/inbox/01-valid-warranty-pl.eml"))[0]
	if first.TicketID != "TKT-000001" || first.Followup || !strings.HasSuffix(first.Reply.Subject, "[TKT-000001]") {
		t.Fatalf("first email: ticket %q followup %v reply %+v", first.TicketID, first.Followup, first.Reply)
	}

	code, out, stderr := runCLI(t, "", "tickets", "list", "--tickets-db", db)
	if code != 0 || !strings.Contains(out, "TKT-000001") || !strings.Contains(out, "anna.nowak@example.pl") || !strings.Contains(out, "triage") {
		t.Fatalf("tickets list: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = runCLI(t, "", "tickets", "takeover", "TKT-000001", "--owner", "piotr", "--tickets-db", db, "--json")
	if code != 0 || !strings.Contains(out, `"agent_disabled":true`) {
		t.Fatalf("tickets takeover: exit %d\n%s%s", code, out, stderr)
	}

	fu := decodeOutcomes(t, proc("../../examples/inbox/follow-ups/14-follow-up-pl.eml"))[0]
	if fu.Status != "skipped" || fu.Reason != "human_owner" || fu.TicketID != "TKT-000001" || !fu.Followup || fu.Reply != nil {
		t.Fatalf("follow-up of a taken-over conversation: %+v", fu)
	}
	code, out, _ = runCLI(t, "", "tickets", "show", "TKT-000001", "--tickets-db", db, "--json")
	var st tickets.State
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
		t.Fatalf("tickets show --json: exit %d, %v\n%s", code, err, out)
	}
	if !st.AgentDisabled || st.Owner != "piotr" || len(st.Messages) != 3 || len(st.Notes) != 1 || !strings.Contains(st.Notes[0].Text, "przecieka") {
		t.Errorf("ticket after the follow-up: %+v", st)
	}
	code, out, _ = runCLI(t, "", "tickets", "show", "TKT-000001", "--tickets-db", db)
	for _, want := range []string{"owner person: piotr", "messages (3)", "notes (1)", "przecieka"} {
		if !strings.Contains(out, want) {
			t.Errorf("tickets show lacks %q:\n%s", want, out)
		}
	}

	if code, _, _ := runCLI(t, "", "tickets", "release", "TKT-000001", "--tickets-db", db); code != 0 {
		t.Fatalf("release: exit %d", code)
	}
	// Released: the same follow-up (processed again) is answered now, and its
	// note is not added twice.
	fu = decodeOutcomes(t, proc("../../examples/inbox/follow-ups/14-follow-up-pl.eml"))[0]
	if fu.Status != "replied" || fu.Scenario != "follow-up" || fu.TicketID != "TKT-000001" || !strings.HasSuffix(fu.Reply.Subject, "[TKT-000001]") {
		t.Errorf("after release: %+v", fu)
	}
	// Its reply promised the consultant: staff were told first, and the
	// ticket notes it beside the customer's text.
	_, out, _ = runCLI(t, "", "tickets", "show", "TKT-000001", "--tickets-db", db, "--json")
	var customer, handoff int
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	for _, n := range st.Notes {
		if n.From == "triage" {
			handoff++
		} else {
			customer++
		}
	}
	if customer != 1 || handoff != 1 {
		t.Errorf("notes after processing the follow-up twice: %+v", st.Notes)
	}

	for _, args := range [][]string{
		{"tickets", "show", "TKT-000099", "--tickets-db", db},
		{"tickets", "takeover", "nonsense", "--tickets-db", db},
		{"tickets", "list", "--tickets-db", filepath.Join(dir, "missing.db")},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != 2 || !strings.Contains(stderr, "tickets") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message naming the problem", args, code, stderr)
		}
	}
}

// TestTicketsConfigAndForce: --config finds the store through
// pipeline.tickets_db; without a store the error says how to name one; a
// conversation another person owns is taken over only with --force.
func TestTicketsConfigAndForce(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "tickets.db")
	code, _, stderr := runCLI(t, "", "process", "--json", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", db, "--outbox", filepath.Join(dir, "outbox"), "../../examples/inbox/01-valid-warranty-pl.eml")
	if code != 0 {
		t.Fatalf("process: exit %d\n%s", code, stderr)
	}
	cfg := filepath.Join(dir, "triage.yaml")
	if err := os.WriteFile(cfg, []byte("pipeline:\n  tickets_db: tickets.db\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TRIAGE_CONFIG", "")
	t.Chdir(t.TempDir()) // the default triage-tickets.db is not there

	if code, out, stderr := runCLI(t, "", "tickets", "list", "--config", cfg); code != 0 || !strings.Contains(out, "TKT-000001") {
		t.Errorf("tickets list --config: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := runCLI(t, "", "tickets", "list"); code != 2 || !strings.Contains(stderr, "pipeline.tickets_db") {
		t.Errorf("tickets list without a store: exit %d, stderr %q; want 2 and a hint at pipeline.tickets_db", code, stderr)
	}

	steps := []struct {
		args      []string
		wantCode  int
		wantOwner string
		wantErr   string
	}{
		{[]string{"takeover", "TKT-000001", "--owner", "anna"}, 0, "anna", ""},
		{[]string{"takeover", "TKT-000001", "--owner", "anna"}, 0, "anna", ""}, // one's own: no --force needed
		{[]string{"takeover", "TKT-000001", "--owner", "piotr"}, 2, "anna", "owned by anna"},
		{[]string{"takeover", "TKT-000001", "--owner", "piotr", "--force"}, 0, "piotr", ""},
	}
	for _, st := range steps {
		code, _, stderr := runCLI(t, "", append(append([]string{"tickets"}, st.args...), "--config", cfg)...)
		if code != st.wantCode || !strings.Contains(stderr, st.wantErr) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", st.args, code, stderr, st.wantCode, st.wantErr)
		}
		s, err := tickets.OpenSQLite(db)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(context.Background(), "TKT-000001")
		s.Close()
		if err != nil || got.Owner != st.wantOwner {
			t.Errorf("%v: owner %q (%v), want %q", st.args, got.Owner, err, st.wantOwner)
		}
	}
}
