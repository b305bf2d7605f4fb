package dispatcher_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"triage/internal/agent"
	"triage/internal/clients/warranty"
	"triage/internal/decision"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/testkit/toolstest"
)

// commitScenario is a scenario whose send_email declares decision and
// commitments, as the shipped ones do.
func commitScenario(t *testing.T, complaint bool) *instructions.Scenario {
	str := map[string]any{"type": "string"}
	sc := toolstest.Scenario(t, false)
	for i := range sc.Functions {
		if sc.Functions[i].Name == dispatcher.FuncSendEmail {
			sc.Functions[i] = toolstest.Function(t, "send_email", toolstest.Object([]any{"to", "subject", "body"}, map[string]any{
				"to": str, "subject": str, "body": map[string]any{"type": "string", "minLength": 1},
				"decision":    map[string]any{"type": "string"},
				"commitments": map[string]any{"type": "array", "items": str},
			}))
		}
	}
	if complaint {
		sc.Complaint = instructions.ComplaintAlways
	}
	return sc
}

// commitSession is a session over the shipped bindings where
// check_warranty answers res under the shipped policy.
func commitSession(t *testing.T, res warranty.Result, complaint bool) *dispatcher.Session {
	t.Helper()
	pol, err := instructions.LoadPolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatcher.New(dispatcher.Config{
		Tools:    toolstest.Shipped(t),
		Builtins: map[string]dispatcher.Func{dispatcher.FuncCheckWarranty: dispatcher.For(dispatcher.CheckWarranty(fakeRegistry{res}, pol))},
		Routes:   okRoutes(dispatcher.FuncCreateTicket, dispatcher.FuncSendEmail, dispatcher.FuncNotifyStaff),
		Now:      func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	msg := toolstest.Message()
	msg.Date = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	return d.Session(msg, commitScenario(t, complaint), "k")
}

var statutoryClaim = warranty.Result{Status: warranty.StatusExpired, ExpirationDate: "2026-03-31", PurchaseDate: "2025-03-24", Buyer: "consumer"}

func reply(decisionBasis string, commitments ...string) map[string]any {
	a := map[string]any{"to": "jan.reply@example.com", "subject": "Re: Reklamacja", "body": "Dzień dobry, odpowiadamy."}
	if decisionBasis != "" {
		a["decision"] = decisionBasis
	}
	if commitments != nil {
		cs := make([]any, len(commitments))
		for i, c := range commitments {
			cs[i] = c
		}
		a["commitments"] = cs
	}
	return a
}

// A scripted model breaks each rule on purpose: the reply is refused with
// the rule's code, the model may rewrite it, and the accepted reply's
// commitments are the verdict's.
func TestCommitmentRules(t *testing.T) {
	for _, tt := range []struct {
		name      string
		res       warranty.Result
		check     bool // check_warranty runs first
		complaint bool
		args      map[string]any
		want      agent.ErrorCode // "" accepted
	}{
		{"statutory: repair offered", statutoryClaim, true, true, reply("statutory", "repair", "replacement"), ""},
		{"statutory: a paid repair is not", statutoryClaim, true, true, reply("statutory", "paid_repair_quote"), dispatcher.CodeCommitmentNotAllowed},
		{"statutory: a refund before repair or replacement is not", statutoryClaim, true, false, reply("statutory", "refund"), dispatcher.CodeCommitmentNotAllowed},
		{"statutory: a price reduction beside a repair is not", statutoryClaim, true, true, reply("statutory", "repair", "price_reduction"), dispatcher.CodeCommitmentNotAllowed},
		{"guarantee: no refund", warranty.Result{Status: warranty.StatusValid, ExpirationDate: "2027-01-01"}, true, false, reply("guarantee", "refund"), dispatcher.CodeCommitmentNotAllowed},
		{"needs_proof: no remedy", warranty.Result{Status: warranty.StatusNotFound}, true, false, reply("needs_proof", "repair"), dispatcher.CodeCommitmentNotAllowed},
		{"expired beyond the period: a paid quote", warranty.Result{Status: warranty.StatusExpired, PurchaseDate: "2020-01-01", Buyer: "consumer"}, true, false, reply("none", "paid_repair_quote"), ""},
		{"a ticket without one", statutoryClaim, true, false, reply("statutory", "ticket"), dispatcher.CodeCommitmentNotAllowed},
		{"none beside another", statutoryClaim, true, false, reply("statutory", "none", "repair"), dispatcher.CodeCommitmentNotAllowed},
		{"none alone without a decision", warranty.Result{}, false, false, reply("", "none"), ""},
		{"callback always", warranty.Result{}, false, false, reply("", "callback"), ""},
		{"a remedy without a decision", warranty.Result{}, false, false, reply("", "replacement"), dispatcher.CodeCommitmentNotAllowed},
		{"another basis", statutoryClaim, true, false, reply("guarantee", "none"), dispatcher.CodeDecisionMismatch},
		{"a basis without a decision", warranty.Result{}, false, false, reply("guarantee"), dispatcher.CodeDecisionMismatch},
		{"a complaint without its decision", statutoryClaim, true, true, reply("", "none"), dispatcher.CodeDecisionMissing},
		{"not a complaint: the decision may go unnamed", statutoryClaim, true, false, reply("", "repair"), ""},
		{"no commitments given: none", statutoryClaim, true, true, reply("statutory"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := commitSession(t, tt.res, tt.complaint)
			ctx := context.Background()
			if tt.check {
				if r := s.Call(ctx, dispatcher.FuncCheckWarranty, map[string]any{"serial_number": "ABC-123456"}); r.Err != nil {
					t.Fatal(r.Err)
				}
				s.StartTurn()
			}
			r := s.Call(ctx, dispatcher.FuncSendEmail, tt.args)
			switch {
			case tt.want == "" && r.Err != nil:
				t.Fatalf("refused: %v", r.Err)
			case tt.want != "" && (r.Err == nil || r.Err.Code != tt.want):
				t.Fatalf("got %v, want %s", r.Err, tt.want)
			}
			v := s.Verdict()
			if tt.want == "" {
				want := decision.Commitments(toStrings(anyList(tt.args["commitments"])))
				if len(want) == 0 {
					want = []decision.Commitment{decision.NoCommitment}
				}
				if !v.Sent || !slices.Equal(v.Commitments, want) {
					t.Errorf("verdict sent %v commitments %v, want %v", v.Sent, v.Commitments, want)
				}
				return
			}
			if v.Sent || v.Blocked != 1 {
				t.Fatalf("verdict = %+v", v)
			}
			// The model rewrites the reply within the decision: accepted.
			fixed := reply("", "none")
			if v.Decision != nil {
				fixed = reply(string(v.Decision.Basis), "none")
			}
			s.StartTurn()
			if r := s.Call(ctx, dispatcher.FuncSendEmail, fixed); r.Err != nil {
				t.Fatalf("the rewritten reply was refused: %v", r.Err)
			}
		})
	}
}

// A ticket the email has may be promised; after two refusals every reply
// is refused unchecked.
func TestCommitmentTicketAndCap(t *testing.T) {
	s := commitSession(t, statutoryClaim, false)
	s.SetTicket("TKT-1")
	ctx := context.Background()
	if r := s.Call(ctx, dispatcher.FuncSendEmail, reply("", "ticket")); r.Err != nil {
		t.Fatalf("a ticket the email has: %v", r.Err)
	}

	s = commitSession(t, statutoryClaim, false)
	for i := range 2 {
		if r := s.Call(ctx, dispatcher.FuncSendEmail, reply("", "refund")); r.Err == nil || r.Err.Code != dispatcher.CodeCommitmentNotAllowed {
			t.Fatalf("call %d: %v", i, r.Err)
		}
		s.StartTurn()
	}
	r := s.Call(ctx, dispatcher.FuncSendEmail, reply("", "none"))
	if r.Err == nil || !strings.Contains(r.Err.Message, "left for a person") {
		t.Fatalf("third call: %v", r.Err)
	}
}

func anyList(v any) []any { l, _ := v.([]any); return l }
