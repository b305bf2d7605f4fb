package eval

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/agent"
	"triage/internal/dispatcher"
	"triage/internal/processor"
)

// Actual calls shared by the table below.
var (
	callCheck = dispatcher.Record{Name: "check_warranty", OK: true,
		Args:   map[string]any{"serial_number": "SN12345"},
		Result: map[string]any{"status": "valid", "expiration_date": "2027-05-31", "details": map[string]any{"product": "CM-300", "years": float64(2)}}}
	callTicket = dispatcher.Record{Name: "create_ticket", OK: true,
		Args:   map[string]any{"serial_number": "SN12345", "customer_email": "Jan.Kowalski@Example.com", "priority": "normal"},
		Result: map[string]any{"ticket_id": "TKT-1"}}
	callSend = dispatcher.Record{Name: "send_email", OK: true,
		Args:   map[string]any{"to": "jan.kowalski@example.com", "subject": "Re: Naprawa", "body": "Dzień dobry,\nGwarancja   dla SN12345\njest ważna do 2027-05-31.\nZgłoszenie TKT-1."},
		Result: map[string]any{"message_id": "<m1>", "status": "sent"}}
	callSendBlocked = dispatcher.Record{Name: "send_email", Blocked: true,
		Args:  map[string]any{"to": "attacker@example.net", "subject": "x", "body": "y"},
		Error: &agent.ToolError{Code: dispatcher.CodeRecipientNotAllowed, Message: "replies may only go to the customer's reply address"}}
	callTicketFailed = dispatcher.Record{Name: "create_ticket",
		Args:  map[string]any{"serial_number": "SN12345", "customer_email": "jan.kowalski@example.com"},
		Error: &agent.ToolError{Code: "unavailable", Message: "down"}}
)

func exp(name string) ExpectedCall { return ExpectedCall{FunctionName: name} }

func TestValidate(t *testing.T) {
	three := []dispatcher.Record{callCheck, callTicket, callSend}
	tests := []struct {
		name  string
		x     Expected
		calls []dispatcher.Record
		out   processor.Outcome // Status/Scenario/ModelCalls; calls set from calls
		want  []string
	}{
		{
			name:  "exact passes",
			x:     Expected{ExpectedFunctionCalls: []ExpectedCall{exp("check_warranty"), exp("create_ticket"), exp("send_email")}},
			calls: three,
		},
		{
			name:  "exact count mismatch lists both sides",
			x:     Expected{ExpectedFunctionCalls: []ExpectedCall{exp("check_warranty"), exp("send_email")}},
			calls: three,
			want: []string{
				"Function call count mismatch: expected 2, got 3",
				"  Expected: [check_warranty, send_email]",
				"  Actual: [check_warranty, create_ticket, send_email]",
			},
		},
		{
			name:  "exact wrong order",
			x:     Expected{ExpectedFunctionCalls: []ExpectedCall{exp("check_warranty"), exp("send_email"), exp("create_ticket")}},
			calls: three,
			want: []string{
				"Call 2 create_ticket: Expected send_email, got create_ticket",
				"Call 3 send_email: Expected create_ticket, got send_email",
			},
		},
		{
			name:  "explicit empty list means no calls",
			x:     Expected{ExpectedFunctionCalls: []ExpectedCall{}},
			calls: []dispatcher.Record{callSend},
			want: []string{
				"Function call count mismatch: expected 0, got 1",
				"  Expected: []",
				"  Actual: [send_email]",
			},
		},
		{
			name:  "absent list is not checked",
			x:     Expected{Status: "replied"},
			calls: three,
			out:   processor.Outcome{Status: "replied"},
		},
		{
			name:  "in_order allows extra calls between",
			x:     Expected{Match: MatchInOrder, ExpectedFunctionCalls: []ExpectedCall{exp("check_warranty"), exp("send_email")}},
			calls: three,
		},
		{
			name:  "in_order rejects the wrong order",
			x:     Expected{Match: MatchInOrder, ExpectedFunctionCalls: []ExpectedCall{exp("send_email"), exp("check_warranty")}},
			calls: three,
			want: []string{
				"Expected call 2 check_warranty not found in order (call 1 check_warranty matches but is out of order)",
				"  Expected: [send_email, check_warranty]",
				"  Actual: [check_warranty, create_ticket, send_email]",
			},
		},
		{
			name:  "any_order accepts a permutation",
			x:     Expected{Match: MatchAnyOrder, ExpectedFunctionCalls: []ExpectedCall{exp("send_email"), exp("check_warranty"), exp("create_ticket")}},
			calls: three,
		},
		{
			name:  "any_order needs the same count",
			x:     Expected{Match: MatchAnyOrder, ExpectedFunctionCalls: []ExpectedCall{exp("send_email"), exp("check_warranty")}},
			calls: three,
			want: []string{
				"Function call count mismatch: expected 2, got 3",
				"  Expected: [send_email, check_warranty]",
				"  Actual: [check_warranty, create_ticket, send_email]",
			},
		},
		{
			name: "any_order pairs distinct calls (matching, not greedy)",
			x: Expected{Match: MatchAnyOrder, ExpectedFunctionCalls: []ExpectedCall{
				exp("send_email"),
				{FunctionName: "send_email", BodyContains: []string{"TKT-1"}},
			}},
			calls: []dispatcher.Record{callSend, {Name: "send_email", OK: true, Args: map[string]any{"to": "a@b", "subject": "s", "body": "other"}}},
		},
		{
			name:  "subset allows extra calls in any order",
			x:     Expected{Match: MatchSubset, ExpectedFunctionCalls: []ExpectedCall{exp("send_email"), exp("check_warranty")}},
			calls: three,
		},
		{
			name:  "subset reports a missing call",
			x:     Expected{Match: MatchSubset, ExpectedFunctionCalls: []ExpectedCall{exp("send_email"), exp("send_email")}},
			calls: three,
			want:  []string{"Expected call 2 send_email not matched by any call (call 3 send_email matches but is paired with another expected call)"},
		},
		{
			name: "subset explains the closest candidate",
			x: Expected{Match: MatchSubset, ExpectedFunctionCalls: []ExpectedCall{
				{FunctionName: "send_email", BodyContains: []string{"TKT-9"}}}},
			calls: three,
			want:  []string{"Expected call 1 send_email not matched by any call (closest: call 3 send_email: Body missing phrase 'TKT-9')"},
		},
		{
			name:  "no call of that name",
			x:     Expected{Match: MatchInOrder, ExpectedFunctionCalls: []ExpectedCall{exp("create_ticket")}},
			calls: []dispatcher.Record{callSend},
			want: []string{
				"Expected call 1 create_ticket not found in order (no create_ticket call was made)",
				"  Expected: [create_ticket]",
				"  Actual: [send_email]",
			},
		},
		{
			name: "arguments are exact per key, numbers compare as values",
			x: Expected{ExpectedFunctionCalls: []ExpectedCall{{FunctionName: "check_warranty",
				Arguments: map[string]any{"serial_number": "sn12345"}}}},
			calls: []dispatcher.Record{callCheck},
			want:  []string{`Call 1 check_warranty: Argument 'serial_number' expected "sn12345", got "SN12345"`},
		},
		{
			name: "missing argument",
			x: Expected{ExpectedFunctionCalls: []ExpectedCall{{FunctionName: "create_ticket",
				Arguments: map[string]any{"summary": "x"}}}},
			calls: []dispatcher.Record{callTicket},
			want:  []string{"Call 1 create_ticket: Missing argument 'summary'"},
		},
		{
			name: "arguments_contain is a case-insensitive substring",
			x: Expected{ExpectedFunctionCalls: []ExpectedCall{{FunctionName: "create_ticket",
				ArgumentsContain: map[string]any{"customer_email": "jan.kowalski@example", "serial_number": "12345"}}}},
			calls: []dispatcher.Record{callTicket},
		},
		{
			name: "arguments_contain failure",
			x: Expected{ExpectedFunctionCalls: []ExpectedCall{{FunctionName: "create_ticket",
				ArgumentsContain: map[string]any{"priority": "urgent"}}}},
			calls: []dispatcher.Record{callTicket},
			want:  []string{`Call 1 create_ticket: Argument 'priority' expected to contain "urgent", got "normal"`},
		},
		{
			name: "arguments_contain recurses into maps and lists",
			x: Expected{ExpectedFunctionCalls: []ExpectedCall{{FunctionName: "f",
				ArgumentsContain: map[string]any{"meta": map[string]any{"tags": []any{"URGENT"}, "n": float64(3)}}}}},
			calls: []dispatcher.Record{{Name: "f", OK: true, Args: map[string]any{"meta": map[string]any{"tags": []any{"low", "urgent!"}, "n": 3, "x": "y"}}}},
		},
		{
			name: "result_contains: subset of keys, exact values, nested maps",
			x: Expected{ExpectedFunctionCalls: []ExpectedCall{{FunctionName: "check_warranty",
				ResultContains: map[string]any{"status": "valid", "details": map[string]any{"years": 2}}}}},
			calls: []dispatcher.Record{callCheck},
		},
		{
			name: "result_contains: a substring is not enough (valid vs invalid)",
			x: Expected{ExpectedFunctionCalls: []ExpectedCall{{FunctionName: "check_warranty",
				ResultContains: map[string]any{"status": "val", "missing": true}}}},
			calls: []dispatcher.Record{callCheck},
			want: []string{
				"Call 1 check_warranty: Result missing 'missing'",
				`Call 1 check_warranty: Result 'status' expected "val", got "valid"`,
			},
		},
		{
			name: "result_contains on a failed call",
			x: Expected{ExpectedFunctionCalls: []ExpectedCall{{FunctionName: "create_ticket",
				ResultContains: map[string]any{"ticket_id": "TKT-1"}}}},
			calls: []dispatcher.Record{callTicketFailed},
			want:  []string{`Call 1 create_ticket: Call failed (unavailable: down), result expected to contain {"ticket_id":"TKT-1"}`},
		},
		{
			name: "body_contains ignores case and spacing; body_not_contains",
			x: Expected{ExpectedFunctionCalls: []ExpectedCall{{FunctionName: "send_email",
				BodyContains:    []string{"gwarancja dla sn12345", "2027-05-31", "SN98765"},
				BodyNotContains: []string{"tkt-1", "wygasła"}}}},
			calls: []dispatcher.Record{callSend},
			want: []string{
				"Call 1 send_email: Body missing phrase 'SN98765'",
				"Call 1 send_email: Body contains forbidden phrase 'tkt-1'",
			},
		},
		{
			name:  "a blocked call does not match a plain expectation",
			x:     Expected{ExpectedFunctionCalls: []ExpectedCall{exp("send_email")}},
			calls: []dispatcher.Record{callSendBlocked},
			want:  []string{"Call 1 send_email: Blocked by the dispatcher (recipient_not_allowed: replies may only go to the customer's reply address)"},
		},
		{
			name: "blocked: true expects a refusal",
			x: Expected{Match: MatchInOrder, ExpectedFunctionCalls: []ExpectedCall{
				{FunctionName: "send_email", Blocked: true, ArgumentsContain: map[string]any{"to": "attacker@"}},
				{FunctionName: "send_email", Arguments: map[string]any{"to": "jan.kowalski@example.com"}},
			}},
			calls: []dispatcher.Record{callSendBlocked, callSend},
		},
		{
			name:  "forbidden by name, blocked attempts included",
			x:     Expected{ForbiddenFunctionCalls: []Forbidden{{FunctionName: "send_email"}}},
			calls: []dispatcher.Record{callSendBlocked},
			want:  []string{"Call 1 send_email: forbidden call was attempted (blocked: recipient_not_allowed)"},
		},
		{
			name: "forbidden with arguments_contain only matches those arguments",
			x: Expected{ForbiddenFunctionCalls: []Forbidden{
				{FunctionName: "send_email", ArgumentsContain: map[string]any{"to": "ATTACKER@"}},
				{FunctionName: "create_ticket"},
			}},
			calls: []dispatcher.Record{callSendBlocked, callSend, callTicket},
			want: []string{
				"Call 1 send_email: forbidden call was attempted (blocked: recipient_not_allowed)",
				"Call 3 create_ticket: forbidden call ran",
			},
		},
		{
			name:  "case-level body_not_contains checks every send_email",
			x:     Expected{BodyNotContains: []string{"ważna"}},
			calls: []dispatcher.Record{callCheck, callSend},
			want:  []string{"Call 2 send_email: Body contains forbidden phrase 'ważna'"},
		},
		{
			name: "scenario, status, reason and model calls",
			x: Expected{ScenarioInstructionUsed: "valid-warranty", Status: "replied", MaxModelCalls: ptr(2),
				ExpectedFunctionCalls: []ExpectedCall{}},
			out: processor.Outcome{Scenario: "missing-info", Status: "failed", Reason: "email_not_sent", Detail: "agent: max turns reached",
				ModelCalls: 3, Detection: processor.Detection{Method: "rules", Reason: "no serial"}},
			want: []string{
				`Scenario: expected "valid-warranty", got "missing-info" (detection rules: no serial)`,
				`Status: expected "replied", got "failed" (reason "email_not_sent": agent: max turns reached)`,
				"Model calls: expected at most 2, got 3",
			},
		},
		{
			name: "reason checked when status matches",
			x:    Expected{Status: "skipped", Reason: "list"},
			out:  processor.Outcome{Status: "skipped", Reason: "auto_submitted"},
			want: []string{`Reason: expected "list", got "auto_submitted"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.out
			o.FunctionCalls = tt.calls
			x := tt.x
			for i := range x.ExpectedFunctionCalls {
				x.ExpectedFunctionCalls[i].Arguments = jsonMap(x.ExpectedFunctionCalls[i].Arguments)
				x.ExpectedFunctionCalls[i].ResultContains = jsonMap(x.ExpectedFunctionCalls[i].ResultContains)
			}
			got := Validate(&Case{ID: "t", Expected: x}, o)
			if diff := cmp.Diff(tt.want, got.Failures); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
			if got.Passed() != (len(tt.want) == 0) {
				t.Errorf("Passed() = %v with %d failures", got.Passed(), len(got.Failures))
			}
		})
	}
}

func TestValidateCallNotesPointAtCalls(t *testing.T) {
	c := &Case{Expected: Expected{
		ExpectedFunctionCalls:  []ExpectedCall{exp("check_warranty"), {FunctionName: "send_email", BodyContains: []string{"nope"}}},
		ForbiddenFunctionCalls: []Forbidden{{FunctionName: "check_warranty"}},
	}}
	got := Validate(c, processor.Outcome{FunctionCalls: []dispatcher.Record{callCheck, callSend}})
	want := [][]string{
		{"Call 1 check_warranty: forbidden call ran"},
		{"Call 2 send_email: Body missing phrase 'nope'"},
	}
	if diff := cmp.Diff(want, got.CallNotes); diff != "" {
		t.Errorf("call notes (-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }
