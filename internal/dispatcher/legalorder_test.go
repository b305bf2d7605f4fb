package dispatcher_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"triage/internal/decision"
	"triage/internal/dispatcher"
	"triage/internal/testkit/toolstest"
)

// A scripted model commits to a refund on a statutory claim on purpose:
// refused as commitment_not_allowed, naming the legal order and what comes
// first; once the decision says the first tier is exhausted (a decision a
// tool returns), the same reply is accepted.
func TestRefundFollowsTheLegalOrder(t *testing.T) {
	for _, exhausted := range []bool{false, true} {
		d := &decision.Decision{Basis: decision.Statutory, Remedies: []decision.Remedy{decision.Repair, decision.Replacement, decision.PriceReduction, decision.Refund},
			FirstTierExhausted: exhausted, Reasons: []string{"the repair failed twice"}}
		check := func(context.Context, *dispatcher.Call) (dispatcher.Result, error) {
			return dispatcher.Result{Value: map[string]any{"status": "expired", "decision": map[string]any{"basis": "statutory"}}, Decision: d}, nil
		}
		disp, err := dispatcher.New(dispatcher.Config{
			Tools:    toolstest.Shipped(t),
			Builtins: map[string]dispatcher.Func{dispatcher.FuncCheckWarranty: check},
			Routes:   okRoutes(dispatcher.FuncCreateTicket, dispatcher.FuncSendEmail, dispatcher.FuncNotifyStaff),
			Now:      func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) },
		})
		if err != nil {
			t.Fatal(err)
		}
		s := disp.Session(toolstest.Message(), commitScenario(t, true), "k")
		ctx := context.Background()
		if r := s.Call(ctx, dispatcher.FuncCheckWarranty, map[string]any{"serial_number": "ABC-123456"}); r.Err != nil {
			t.Fatal(r.Err)
		}
		s.StartTurn()
		r := s.Call(ctx, dispatcher.FuncSendEmail, reply("statutory", "refund"))
		switch {
		case exhausted && r.Err != nil:
			t.Errorf("first tier exhausted: refund refused: %v", r.Err)
		case !exhausted && (r.Err == nil || r.Err.Code != dispatcher.CodeCommitmentNotAllowed):
			t.Errorf("refund on a statutory claim: %v, want %s", r.Err, dispatcher.CodeCommitmentNotAllowed)
		case !exhausted && (!strings.Contains(r.Err.Message, "legal order") || !strings.Contains(r.Err.Message, "repair, replacement")):
			t.Errorf("refusal %q does not name the legal order and repair, replacement", r.Err.Message)
		}
		if v := s.Verdict(); v.Sent != exhausted {
			t.Errorf("exhausted %v: sent %v", exhausted, v.Sent)
		}
	}
}
