package agent_test

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	embedded "triage/instructions"
	"triage/internal/agent"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/message"
	"triage/internal/testkit/geminitest"
)

// countingRoutes answers every builtin and counts the calls that ran (the
// look-ups of one turn run at once).
func countingRoutes(ran map[string]int) map[string]dispatcher.Func {
	out := map[string]dispatcher.Func{}
	var mu sync.Mutex
	for _, name := range []string{dispatcher.FuncCheckWarranty, dispatcher.FuncCreateTicket, dispatcher.FuncSendEmail, dispatcher.FuncNotifyStaff} {
		out[name] = dispatcher.Untyped(func(ctx context.Context, c *dispatcher.Call) (map[string]any, error) {
			mu.Lock()
			ran[c.Name]++
			n := ran[c.Name]
			mu.Unlock()
			switch c.Name {
			case dispatcher.FuncCheckWarranty:
				return map[string]any{"serial_number": "SN-48213-PL", "status": "valid"}, nil
			case dispatcher.FuncCreateTicket:
				return map[string]any{"ticket_id": fmt.Sprintf("TKT-%d", n), "status": "created"}, nil
			}
			return map[string]any{"message_id": "<r@x>", "status": "sent"}, nil
		})
	}
	return out
}

// A hostile model asks for 1,000 calls per turn, through the
// real genai client and the real dispatcher with the shipped tools.yaml.
// At most 8 calls per turn and 24 per email have any effect; the rest are
// answered with an error and recorded blocked; the ticket (an effect) is
// opened once, and its repeats return the first result.
func TestHostileModelIsCapped(t *testing.T) {
	many := func(turn int, name string, args func(i int) map[string]any) geminitest.Step {
		parts := make([]map[string]any, 1000)
		for i := range parts {
			parts[i] = geminitest.Call(fmt.Sprintf("t%d-%d", turn, i), name, args(i))
		}
		return geminitest.One(parts...)
	}
	check := func(int) map[string]any { return map[string]any{"serial_number": "SN-48213-PL"} }
	ticket := func(int) map[string]any {
		return map[string]any{"serial_number": "SN-48213-PL", "customer_email": "jan@example.com", "priority": "high"}
	}
	send := func(i int) map[string]any {
		return map[string]any{"to": "jan@example.com", "subject": "Re: x", "body": fmt.Sprint("reply ", i)}
	}
	f := geminitest.New(t,
		many(1, "check_warranty", check),
		many(2, "create_ticket", ticket),
		many(3, "check_warranty", check),
		many(4, "send_email", send),             // the email's 24 calls are used up
		geminitest.One(geminitest.Text("done")), // never asked: the final function was refused thrice
	)

	set, err := instructions.LoadScenarios(embedded.FS, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := instructions.LoadTools(embedded.FS, instructions.ToolsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]int{}
	other := map[string]dispatcher.Func{} // tools that are not builtins (an MCP server) are not reached here
	for _, name := range ts.Names() {
		if ts.Get(name).Builtin == "" {
			other[name] = dispatcher.Untyped(func(context.Context, *dispatcher.Call) (map[string]any, error) { return nil, fmt.Errorf("not used") })
		}
	}
	d, err := dispatcher.New(dispatcher.Config{Tools: ts, Builtins: countingRoutes(ran), Routes: other})
	if err != nil {
		t.Fatal(err)
	}
	msg := &message.Message{MessageID: "<in@x>", From: mail.Address{Address: "jan@example.com"}, ReplyTo: "jan@example.com",
		Subject: "Reklamacja", Text: "Ekspres SN-48213-PL nie grzeje."}
	sc := set.Get("valid-warranty")
	session := d.Session(msg, sc, "k")
	decls := make([]*genai.FunctionDeclaration, len(sc.Functions))
	for i, fn := range sc.Functions {
		decls[i] = &genai.FunctionDeclaration{Name: fn.Name, Description: fn.Description, ParametersJsonSchema: fn.Parameters}
	}
	a := newAgent(t, gemini(f), &sleeps{}, nil)
	req := agent.Request{System: system, Prompt: prompt, Functions: decls, FinalFunction: "send_email"}
	res, err := a.Run(context.Background(), req, session)
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalCalled {
		t.Errorf("the final function succeeded after the email's calls were used up")
	}

	type tally struct{ ok, repeated, capped, other int }
	got := map[string]*tally{}
	for _, r := range session.Records() {
		c := got[r.Name]
		if c == nil {
			c = &tally{}
			got[r.Name] = c
		}
		switch {
		case r.Repeated:
			c.repeated++
		case r.OK:
			c.ok++
		case r.Blocked && r.Error.Code == dispatcher.CodeTooManyCalls:
			c.capped++
		default:
			c.other++
		}
	}
	// The loop passes the first agent.DefaultMaxCallsPerTurn (16) calls of
	// a turn to the dispatcher and refuses the rest unrun; the dispatcher
	// runs 8 of those 16.
	want := map[string]*tally{
		"check_warranty": {ok: 16, capped: 16},
		"create_ticket":  {ok: 1, repeated: 7, capped: 8},
		"send_email":     {capped: 16},
	}
	if res.RefusedCalls != 4*(1000-agent.DefaultMaxCallsPerTurn) {
		t.Errorf("RefusedCalls = %d, want %d", res.RefusedCalls, 4*(1000-agent.DefaultMaxCallsPerTurn))
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(tally{})); diff != "" {
		t.Errorf("records by function (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"check_warranty": 16, "create_ticket": 1}, ran); diff != "" {
		t.Errorf("calls that reached a backend (-want +got):\n%s", diff)
	}
	// Turn 4's send_email calls, all refused too_many_calls, end the loop:
	// the model is not asked again.
	if !errors.Is(res.Stop, agent.ErrFinalRefused) || f.Left() != 1 || res.ModelCalls != 4 {
		t.Errorf("stop %v after %d model calls (%d steps left), want ErrFinalRefused after turn 4", res.Stop, res.ModelCalls, f.Left())
	}
	// Every call of turn 3 passed on was answered to the model, those the
	// dispatcher capped with the error, in the request after it.
	reqs := f.Requests()
	n, failed := 0, 0
	for _, c := range reqs[3].Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil && strings.HasPrefix(p.FunctionResponse.ID, "t3-") {
				n++
				if p.FunctionResponse.Response["ok"] == false {
					failed++
				}
			}
		}
	}
	if n != agent.DefaultMaxCallsPerTurn || failed != agent.DefaultMaxCallsPerTurn-dispatcher.DefaultMaxCallsPerTurn {
		t.Errorf("turn 3: %d responses, %d errors went back to the model, want %d and %d", n, failed, agent.DefaultMaxCallsPerTurn, agent.DefaultMaxCallsPerTurn-dispatcher.DefaultMaxCallsPerTurn)
	}
}
