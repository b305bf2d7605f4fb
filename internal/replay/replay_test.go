package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
	"triage/internal/decision"
	"triage/internal/processor"

	"github.com/google/go-cmp/cmp"

	"triage"
)

// TestStability: with k runs a side's outcome is the most frequent
// one, and a flip is reported only when every run of both sides agrees.
func TestStability(t *testing.T) {
	ticket := View{Scenario: "valid-warranty", Status: "replied", Calls: []string{"check_warranty", "create_ticket", "send_email"}, ReplyMode: "send"}
	noTicket := View{Scenario: "valid-warranty", Status: "replied", Calls: []string{"check_warranty", "send_email"}, ReplyMode: "send"}
	tests := []struct {
		name  string
		views []View
		want  Side
	}{
		{"all agree", []View{ticket, ticket, ticket}, Side{View: ticket, Agreed: 3, Runs: 3}},
		{"majority", []View{noTicket, ticket, ticket}, Side{View: ticket, Agreed: 2, Runs: 3}},
		{"tie keeps the first", []View{noTicket, ticket}, Side{View: noTicket, Agreed: 1, Runs: 2}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tally(tt.views)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if diff := cmp.Diff([]Kind{KindTicket, KindCalls}, flipKinds(ticket, noTicket)); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	esc := noTicket
	esc.Escalated, esc.Status, esc.ReplyMode, esc.Scenario = true, "drafted", "draft", "escalation"
	if diff := cmp.Diff([]Kind{KindScenario, KindStatus, KindReplyMode, KindEscalated}, flipKinds(noTicket, esc)); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
}

// hostile is what a stranger can put in any field that reaches the
// operator's terminal: an OSC 52 clipboard write, a screen clear, a carriage
// return that overwrites the line, a C1 CSI and a bidi override.
const hostile = "x\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[H\rfake\u009b31m\u202eevil"

// The human-readable report escapes control characters.
func TestReportEscapesControls(t *testing.T) {
	var b bytes.Buffer
	printFlip(&b, Record{Type: TypeFlip, Input: hostile, From: hostile, Subject: hostile, Kinds: []Kind{KindStatus},
		Baseline: Side{View: View{Scenario: "s", Status: triage.StatusReplied, Calls: []string{hostile}}},
		New:      Side{View: View{Scenario: "s", Status: triage.StatusFailed, Reason: "email_not_sent"}}}, "!")
	got := b.String()
	if i := strings.IndexAny(got, "\x1b\x07\r\u009b\u202e"); i >= 0 {
		t.Errorf("a control character reached the terminal at %d: %q", i, got[max(0, i-20):min(len(got), i+20)])
	}
	if !strings.Contains(got, `\x1b]52`) {
		t.Errorf("the escaped sequence is not shown: %q", got)
	}
}

// ReadInputs names an mbox's messages FILE#N and keeps what cannot be
// read as an input with its error, in order.
func TestReadInputs(t *testing.T) {
	files := map[string]string{
		"a.eml":     "Subject: a\r\n\r\nbody\r\n",
		"box.mbox":  "From x@example.com Mon Jan  5 10:00:00 2026\nSubject: one\n\nbody\n\nFrom y@example.com Mon Jan  5 10:00:00 2026\nSubject: two\n\nbody\n",
		"gone.eml":  "",
		"after.eml": "Subject: after\r\n\r\nbody\r\n",
	}
	read := func(path string) ([]byte, error) {
		if files[path] == "" {
			return nil, errors.New(path + ": not found")
		}
		return []byte(files[path]), nil
	}
	var got []string
	for _, in := range ReadInputs([]string{"a.eml", "box.mbox", "gone.eml", "after.eml"}, read, 1<<20) {
		s := in.Name
		if in.Err != nil {
			s += " (" + in.Err.Error() + ")"
		}
		got = append(got, s)
	}
	want := []string{"a.eml", "box.mbox#1", "box.mbox#2", "gone.eml (gone.eml: not found)", "after.eml"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("inputs (-want +got):\n%s", diff)
	}
}

// all returns the records in input order whatever order the workers
// finish in, and the source's error.
func TestAllKeepsOrder(t *testing.T) {
	var ins []Input
	for i := range 20 {
		ins = append(ins, Input{Name: strconv.Itoa(i)})
	}
	stop := errors.New("source ended")
	source := func(yield func(Input) bool) error {
		Inputs(ins)(yield)
		return stop
	}
	recs, err := all(context.Background(), source, 4, func(in Input) Record {
		n, _ := strconv.Atoi(in.Name)
		time.Sleep(time.Duration(20-n) * time.Millisecond)
		return Record{Input: in.Name}
	})
	if !errors.Is(err, stop) {
		t.Errorf("err %v, want the source's", err)
	}
	for i, r := range recs {
		if r.Input != strconv.Itoa(i) {
			t.Fatalf("record %d is input %s", i, r.Input)
		}
	}
	if len(recs) != len(ins) {
		t.Errorf("%d records, want %d", len(recs), len(ins))
	}
}

// A decision whose basis or remedies differ, and accepted commitments that
// differ, are flips of their own kinds; the view sorts the commitments and
// compares no more of the decision than its basis and remedies.
func TestDecisionAndCommitmentFlips(t *testing.T) {
	received := decision.Date{Time: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)}
	out := func(basis decision.Basis, remedies []decision.Remedy, cs ...decision.Commitment) processor.Outcome {
		return processor.Outcome{Scenario: "expired-warranty", Status: triage.StatusReplied,
			Decision:    &decision.Decision{Basis: basis, Remedies: remedies, AnswerBy: received},
			Commitments: cs}
	}
	statutory := out(decision.Statutory, []decision.Remedy{decision.Repair, decision.Replacement}, decision.Ticket, decision.CommitRepair)
	none := out(decision.None, []decision.Remedy{decision.PaidRepairQuote}, decision.CommitPaidRepairQuote)
	if diff := cmp.Diff([]Kind{KindDecision, KindCommitments}, flipKinds(viewOf(statutory), viewOf(none))); diff != "" {
		t.Errorf("statutory -> none kinds (-want +got):\n%s", diff)
	}
	fewer := out(decision.Statutory, []decision.Remedy{decision.Repair}, decision.CommitRepair, decision.Ticket)
	if diff := cmp.Diff([]Kind{KindDecision}, flipKinds(viewOf(statutory), viewOf(fewer))); diff != "" {
		t.Errorf("fewer remedies kinds (-want +got):\n%s", diff)
	}
	later := statutory
	later.Decision = &decision.Decision{Basis: decision.Statutory, Remedies: []decision.Remedy{decision.Repair, decision.Replacement}, Presumed: true}
	later.Commitments = []decision.Commitment{decision.CommitRepair, decision.Ticket}
	if kinds := flipKinds(viewOf(statutory), viewOf(later)); len(kinds) != 0 {
		t.Errorf("the same basis, remedies and commitments flip: %v", kinds)
	}
	noDecision := statutory
	noDecision.Decision, noDecision.Commitments = nil, nil
	if diff := cmp.Diff([]Kind{KindDecision, KindCommitments}, flipKinds(viewOf(noDecision), viewOf(statutory))); diff != "" {
		t.Errorf("none reached -> statutory kinds (-want +got):\n%s", diff)
	}

	// The JSON of a view without a decision is what it always was.
	b, _ := json.Marshal(viewOf(noDecision))
	if want := `{"scenario":"expired-warranty","status":"replied","calls":[],"reply_mode":"send","escalated":false}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	b, _ = json.Marshal(viewOf(none))
	if want := `"decision":{"basis":"none","remedies":["paid_repair_quote"]},"commitments":["paid_repair_quote"]}`; !strings.HasSuffix(string(b), want) {
		t.Errorf("JSON %s, want it to end %s", b, want)
	}

	var w bytes.Buffer
	printFlip(&w, Record{Type: TypeFlip, Input: "15.eml", Kinds: flipKinds(viewOf(statutory), viewOf(none)),
		Baseline: Side{View: viewOf(statutory), Agreed: 1, Runs: 1}, New: Side{View: viewOf(none), Agreed: 1, Runs: 1}}, "!")
	for _, want := range []string{"15.eml  decision, commitments",
		"decision statutory (repair, replacement); commits repair, ticket",
		"decision none (paid_repair_quote); commits paid_repair_quote"} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, w.String())
		}
	}
}
