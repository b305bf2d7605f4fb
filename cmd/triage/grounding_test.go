package main

import (
	"path/filepath"
	"testing"

	"triage"
	embedded "triage/instructions"
	"triage/internal/dispatcher"
	"triage/internal/grounding"
	"triage/internal/instructions"
)

// TestSampleInboxGrounding processes the sample inbox as `make run` does
// (the inbox, then the follow-ups that answer it) with the shipped
// instructions, whose send_email is grounded: no correct reply may be
// refused for an unsupported claim. It logs the false-positive count over
// every reply with the claims checked.
func TestSampleInboxGrounding(t *testing.T) {
	ts, err := instructions.LoadTools(embedded.FS, instructions.ToolsConfig{Builtins: builtinNames})
	if err != nil {
		t.Fatal(err)
	}
	if !ts.Tools[dispatcher.FuncSendEmail].Grounded {
		t.Fatal("the shipped tools.yaml does not ground send_email: this test would check nothing")
	}
	dir := t.TempDir()
	flags := []string{"process", "--json", "--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "tickets.db"),
		"--outbox", filepath.Join(dir, "outbox"), "--staff", "kierownik@example.com"}
	replies, claims, flagged := 0, 0, 0
	for _, pass := range []string{"../../examples/inbox/*.eml", "../../examples/inbox/follow-ups/*.eml"} {
		files, err := filepath.Glob(pass)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %d files, err %v", pass, len(files), err)
		}
		code, stdout, stderr := runCLI(t, "", append(flags, files...)...)
		outs := decodeOutcomes(t, stdout)
		if code != 0 || len(outs) != len(files) {
			t.Fatalf("%s: exit %d, %d outcomes; stderr:\n%s", pass, code, len(outs), stderr)
		}
		for _, o := range outs {
			if o.Reason == triage.ReasonUngroundedClaim {
				t.Errorf("%s: failed, ungrounded_claim: %s", o.File, o.Detail)
			}
			for _, c := range o.FunctionCalls {
				if c.Name != dispatcher.FuncSendEmail {
					continue
				}
				if c.Error != nil && c.Error.Code == dispatcher.CodeUngroundedClaim {
					flagged++
					t.Errorf("%s: a correct reply was refused: %s", o.File, c.Error.Message)
				}
				if c.OK && !c.Blocked {
					replies++
					for _, arg := range []string{"subject", "body"} {
						s, _ := c.Args[arg].(string)
						claims += len(grounding.Claims(s))
					}
				}
			}
		}
	}
	if replies < 13 || claims == 0 {
		t.Errorf("replies %d, claims %d: the sample inbox should be answered with claims to check", replies, claims)
	}
	t.Logf("sample inbox grounding: replies %d, claims checked %d, flagged %d", replies, claims, flagged)
}
