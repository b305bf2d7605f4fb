package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/dispatcher"
	"triage/internal/processor"
)

// A dry run's reply is the real reply: the same text as a real run of the
// same email, except that the ticket number is the placeholder; nothing of
// the stand-in results ("dry_run") reaches it, and it passes the same
// grounding check (send_email is grounded: true in the built-in tools).
func TestDryRunReplyIsTheRealReply(t *testing.T) {
	const file = "../../examples/inbox/01-valid-warranty-pl.eml"
	reply := func(dry bool) (processor.Outcome, string) {
		t.Helper()
		dir := t.TempDir()
		args := []string{"process", "--json", "--offline", "--warranty-csv", "../../examples/warranty.csv",
			"--tickets-db", filepath.Join(dir, "tickets.db"), "--outbox", filepath.Join(dir, "outbox"), "--staff", "kierownik@example.com"}
		if dry {
			args = append(args, "--dry-run")
		}
		code, stdout, stderr := runCLI(t, "", append(args, file)...)
		var out processor.Outcome
		if err := json.Unmarshal([]byte(stdout), &out); err != nil || code != 0 {
			t.Fatalf("dry run %v: exit %d, %v\nstdout %s\nstderr %s", dry, code, err, stdout, stderr)
		}
		for _, fc := range out.FunctionCalls {
			if fc.Name == dispatcher.FuncSendEmail && fc.OK {
				body, _ := fc.Args["body"].(string)
				return out, body
			}
		}
		t.Fatalf("dry run %v: no successful send_email: %+v", dry, out.FunctionCalls)
		return out, ""
	}
	real, realBody := reply(false)
	dry, dryBody := reply(true)
	if real.TicketID == "" || !strings.Contains(realBody, real.TicketID) {
		t.Fatalf("the real reply does not name its ticket %q:\n%s", real.TicketID, realBody)
	}
	if strings.Contains(dryBody, "dry_run") || strings.Contains(dryBody, "dry run:") {
		t.Errorf("the dry run's reply shows the stand-in results:\n%s", dryBody)
	}
	if want := strings.ReplaceAll(realBody, real.TicketID, dispatcher.DryRunTicketID); dryBody != want {
		t.Errorf("the dry run's reply differs from the real one beyond the ticket number:\n--- dry run\n%s\n--- real, ticket number replaced\n%s", dryBody, want)
	}
	if dry.Status != real.Status || !dry.DryRun || dry.TicketID != "" {
		t.Errorf("dry run: status %s (real %s), dry_run %v, ticket_id %q; want the real status, true and no ticket", dry.Status, real.Status, dry.DryRun, dry.TicketID)
	}
}
