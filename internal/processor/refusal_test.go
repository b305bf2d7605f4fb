package processor_test

import (
	"fmt"
	"strings"
	"testing"

	"triage"
	"triage/internal/agent"
	"triage/internal/testkit/geminitest"
)

// steps repeats one scripted model turn n times.
func steps(n int, s geminitest.Step) []geminitest.Step {
	out := make([]geminitest.Step, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestThirdRefusalEndsEmail: a model that sends the same ungrounded reply
// again and again is asked no more after the third refusal: the email
// fails ungrounded_claim, with three model calls for the reply, not ten.
func TestThirdRefusalEndsEmail(t *testing.T) {
	reply := geminitest.One(geminitest.Call("s", "send_email", map[string]any{
		"to": "anna@example.pl", "subject": "Re: Reklamacja",
		"body": "Dzień dobry,\n\nnaprawa kosztuje 499 zł i potrwa do 2031-01-01.\n\nZespół serwisu"}))
	script := append([]geminitest.Step{
		geminitest.One(geminitest.Call("c", "check_warranty", map[string]any{"serial_number": "SN-48213-PL"})),
		geminitest.One(geminitest.Call("t", "create_ticket", map[string]any{"serial_number": "SN-48213-PL", "customer_email": "anna@example.pl", "priority": "normal"})),
	}, steps(agent.DefaultMaxTurns, reply)...)
	f := geminitest.New(t, script...)
	e := newEnv(t, &agent.Gemini{Client: f.Client()})
	out := e.run(t, convEmail(anna, "Reklamacja", first, firstTx))
	if out.Status != triage.StatusFailed || out.Reason != triage.ReasonUngroundedClaim {
		t.Errorf("status %s/%s (%s), want failed/ungrounded_claim", out.Status, out.Reason, out.Detail)
	}
	sends := 0
	for _, c := range out.FunctionCalls {
		if c.Name == "send_email" {
			sends++
		}
	}
	asked := len(f.Requests())
	if sends != agent.MaxFinalRefusals || asked != 2+agent.MaxFinalRefusals || out.ModelCalls != asked {
		t.Errorf("%d send_email calls, %d model calls (outcome %d); want %d and %d", sends, asked, out.ModelCalls, agent.MaxFinalRefusals, 2+agent.MaxFinalRefusals)
	}
}

// TestDecidedEmailStopsAsking: an escalation whose staff notice the notice
// bound refused cannot be answered (the acknowledgement waits for the
// notice): it fails notice_limit after that one model call, the model is
// not asked again.
func TestDecidedEmailStopsAsking(t *testing.T) {
	notify := geminitest.One(geminitest.Call("n", "notify_staff", map[string]any{"subject": "Klient prosi o kontakt", "body": "Klient prosi o rozmowę z człowiekiem."}))
	send := geminitest.One(geminitest.Call("s", "send_email", map[string]any{"to": "anna@example.pl", "subject": "Re: Skandal", "body": "Dzień dobry,\n\nprzekazaliśmy sprawę konsultantowi.\n\nZespół serwisu"}))
	// The first escalation: notice, then the reply. The second: the notice
	// refused, then whatever a model tries next, for every turn it has.
	script := []geminitest.Step{notify, send, notify}
	for range agent.DefaultMaxTurns {
		script = append(script, send, notify)
	}
	f := geminitest.New(t, script...)
	e := newEnvStaff(t, &agent.Gemini{Client: f.Client()}, []string{boss})
	e.ob.SetNoticeLimits(triage.NoticeLimits{PerCustomer: 1, PerHour: 30})
	if out := e.run(t, convEmail(anna, "Skandal", "<angry-1@example.pl>", angry)); out.Status != triage.StatusReplied {
		t.Fatalf("first escalation: %s/%s (%s)", out.Status, out.Reason, out.Detail)
	}
	before := len(f.Requests())
	out := e.run(t, convEmail(anna, "Skandal", "<angry-2@example.pl>", angry))
	if out.Status != triage.StatusFailed || out.Reason != triage.ReasonNoticeLimit {
		t.Errorf("second escalation: %s/%s (%s), want failed/notice_limit", out.Status, out.Reason, out.Detail)
	}
	var calls []string
	for _, c := range out.FunctionCalls {
		calls = append(calls, fmt.Sprintf("%s %v", c.Name, c.OK))
	}
	if asked := len(f.Requests()) - before; asked != 1 || out.ModelCalls != 1 {
		t.Errorf("the model was asked %d times (outcome %d) after the notice was refused; want 1 (calls %s)", asked, out.ModelCalls, strings.Join(calls, ", "))
	}
}
