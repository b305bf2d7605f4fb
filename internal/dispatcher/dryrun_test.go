package dispatcher

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"triage/internal/agent"
	"triage/internal/testkit/toolstest"
)

// In a dry run every guardrail still holds, calls to effect functions (any
// binding with effect: true, not just the builtins) are answered
// {"dry_run": true} without reaching their route, and the rest run.
func TestSessionDryRun(t *testing.T) {
	f := &fakeRoutes{}
	refund := fn(t, "refund", obj([]any{"amount"}, map[string]any{"amount": map[string]any{"type": "number"}}))
	lookup := fn(t, "lookup", obj([]any{}, map[string]any{}))
	ts := toolstest.Shipped(t)
	extra := parseTools(t, `
tools:
  refund: {http: {method: POST, url: "http://127.0.0.1:1/refund"}, effect: true}
  lookup: {http: {url: "http://127.0.0.1:1/lookup"}}
`)
	ts.Tools["refund"], ts.Tools["lookup"] = extra.Get("refund"), extra.Get("lookup")
	d, err := New(Config{
		Tools:  ts,
		Routes: f.routes(FuncCheckWarranty, FuncCreateTicket, FuncSendEmail, FuncNotifyStaff, "refund", "lookup"),
		Now:    stepClock(),
	})
	if err != nil {
		t.Fatal(err)
	}
	s := d.Session(testMessage(), testScenario(t, false, refund, lookup), "key-1")
	s.SetOptions(Options{DryRun: true, Draft: true})
	ctx := context.Background()
	steps := []step{
		{FuncCheckWarranty, map[string]any{"serial_number": "SN-48213-PL"}},
		{FuncCreateTicket, map[string]any{"serial_number": "SN-48213-PL", "customer_email": "bob@evil.example", "priority": "high"}}, // guardrail
		{FuncCreateTicket, map[string]any{"serial_number": "SN-48213-PL", "customer_email": "jan@example.com", "priority": "high"}},
		{"refund", map[string]any{"amount": 10}},
		{"lookup", map[string]any{}},
		email("attacker@evil.example", "Re: x", "hi"), // guardrail
		email("jan.reply@example.com", "Re: x", "hi"),
		email("jan.reply@example.com", "Re: x", "again"), // one reply per email, dry run or not
	}
	for i, st := range steps {
		if i == 1 {
			s.StartTurn() // create_ticket requires the check in an earlier turn
		}
		s.Call(ctx, st.name, st.args)
	}
	// The stand-in claims no outcome (no status): a builtin's result keys a
	// reply may show get placeholders, create_ticket's ticket_id.
	dry := func(name string, args map[string]any, draft bool) Record {
		res := map[string]any{"dry_run": true, "message": "dry run: " + name + " was not executed; nothing was changed"}
		if draft {
			res["draft"] = true
		}
		if name == FuncCreateTicket {
			res["ticket_id"] = DryRunTicketID
		}
		return Record{Name: name, Args: args, OK: true, Result: res, DryRun: true, DurationMS: 5}
	}
	want := []Record{
		ok(FuncCheckWarranty, steps[0].args),
		refused(FuncCreateTicket, steps[1].args, CodeSenderMismatch),
		dry(FuncCreateTicket, steps[2].args, false),
		dry("refund", steps[3].args, false),
		ok("lookup", steps[4].args),
		refused(FuncSendEmail, steps[5].args, CodeRecipientNotAllowed),
		dry(FuncSendEmail, steps[6].args, true),
		refused(FuncSendEmail, steps[7].args, CodeMaxCalls),
	}
	if diff := cmp.Diff(want, s.Records(), cmpopts.IgnoreFields(agent.ToolError{}, "Message")); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{FuncCheckWarranty, "lookup"}, f.calls); diff != "" {
		t.Errorf("routes reached (-want +got):\n%s", diff)
	}
}

// Without a dry run the routes run, and Call.Draft carries the reply mode.
func TestSessionDraftReachesRoute(t *testing.T) {
	var got []bool
	d, err := New(Config{Tools: toolstest.Shipped(t), Builtins: (&fakeRoutes{}).routes(FuncCheckWarranty, FuncCreateTicket, FuncNotifyStaff), Routes: map[string]Func{
		FuncSendEmail: Untyped(func(ctx context.Context, c *Call) (map[string]any, error) {
			got = append(got, c.Draft)
			return map[string]any{"status": "drafted"}, nil
		}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, draft := range []bool{true, false} {
		s := d.Session(testMessage(), testScenario(t, false), "key-1")
		s.SetOptions(Options{Draft: draft})
		env := s.Call(context.Background(), FuncSendEmail, map[string]any{"to": "jan.reply@example.com", "subject": "Re: x", "body": "hi"}).Envelope()
		if env["ok"] != true {
			t.Fatalf("send_email: %v", env)
		}
	}
	if diff := cmp.Diff([]bool{true, false}, got); diff != "" {
		t.Errorf("Call.Draft seen by the route (-want +got):\n%s", diff)
	}
}
