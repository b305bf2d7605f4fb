package agent_test

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
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

// shippedSession is the real dispatcher with the shipped tools.yaml over
// counting builtins, for one valid-warranty email naming two serials.
func shippedSession(t *testing.T, ran map[string]int) (*dispatcher.Session, []*genai.FunctionDeclaration) {
	t.Helper()
	set, err := instructions.LoadScenarios(embedded.FS, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := instructions.LoadTools(embedded.FS, instructions.ToolsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	other := map[string]dispatcher.Func{}
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
		Subject: "Reklamacja", Text: "Ekspresy SN-48213-PL i SN-51111-PL nie grzeją."}
	sc := set.Get("valid-warranty")
	decls := make([]*genai.FunctionDeclaration, len(sc.Functions))
	for i, fn := range sc.Functions {
		decls[i] = &genai.FunctionDeclaration{Name: fn.Name, Description: fn.Description, ParametersJsonSchema: fn.Parameters}
	}
	return d.Session(msg, sc, "k"), decls
}

// A model that asks for independent look-ups in one turn (the warranty of
// two serials) has both run, counted as one model call, and both responses
// sent back together, in call order, in the next request. A dependent
// effect asked in the same turn as what it depends on is refused unrun
// (create_ticket requires the check in an earlier turn), and two effects
// in one turn never open two tickets: the second is refused by the
// effect's once-per-email limit. A reply asked in the turn that opens the
// ticket is checked like any other: it cannot quote a ticket number the
// model has not been given, so the effects of a turn never run unchecked.
func TestOneTurnMayHoldSeveralCalls(t *testing.T) {
	check := func(id, sn string) map[string]any {
		return geminitest.Call(id, "check_warranty", map[string]any{"serial_number": sn})
	}
	ticket := func(id, sn string) map[string]any {
		return geminitest.Call(id, "create_ticket", map[string]any{"serial_number": sn, "customer_email": "jan@example.com", "priority": "normal"})
	}
	f := geminitest.New(t,
		geminitest.One(check("c1", "SN-48213-PL"), ticket("t0", "SN-48213-PL")),
		geminitest.One(check("c2", "SN-51111-PL"), check("c3", "SN-48213-PL")), // look-ups only: run at once
		geminitest.One(ticket("t1", "SN-48213-PL"), ticket("t2", "SN-51111-PL"),
			geminitest.Call("s1", "send_email", map[string]any{"to": "jan@example.com", "subject": "Re: Reklamacja",
				"body": "Otworzyliśmy zgłoszenie TKT-999 dla SN-48213-PL."})),
		geminitest.One(geminitest.Text("I have opened the ticket.")),
		geminitest.One(geminitest.Text("Done.")),
	)
	ran := map[string]int{}
	session, decls := shippedSession(t, ran)
	a := newAgent(t, gemini(f), &sleeps{}, nil)
	res, err := a.Run(context.Background(), agent.Request{System: system, Prompt: prompt, Functions: decls, FinalFunction: "send_email"}, session)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Stop, agent.ErrNoFinalCall) || res.ModelCalls != 5 || res.Turns != 5 {
		t.Errorf("stop %v after %d model calls, %d turns; want ErrNoFinalCall after 5 and 5", res.Stop, res.ModelCalls, res.Turns)
	}
	// Nothing was sent: the reply that guessed the ticket's number was
	// refused before it reached the mail backend.
	if diff := cmp.Diff(map[string]int{"check_warranty": 3, "create_ticket": 1}, ran); diff != "" {
		t.Errorf("calls that reached a backend (-want +got):\n%s", diff)
	}
	type rec struct {
		Name, Serial string
		OK           bool
		Code         agent.ErrorCode
	}
	var got []rec
	for _, r := range session.Records() {
		x := rec{Name: r.Name, Serial: fmt.Sprint(r.Args["serial_number"]), OK: r.OK}
		if r.Error != nil {
			x.Code = r.Error.Code
		}
		got = append(got, x)
	}
	want := []rec{
		{"check_warranty", "SN-48213-PL", true, ""},
		{"create_ticket", "SN-48213-PL", false, dispatcher.CodeRequirementNotMet},
		{"check_warranty", "SN-51111-PL", true, ""},
		{"check_warranty", "SN-48213-PL", true, ""},
		{"create_ticket", "SN-48213-PL", true, ""},
		{"create_ticket", "SN-51111-PL", false, dispatcher.CodeMaxCalls},
		{"send_email", "<nil>", false, dispatcher.CodeUngroundedClaim},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records in order (-want +got):\n%s", diff)
	}
	// Each turn's responses go back together, in call order, in the
	// request after it.
	reqs := f.Requests()
	for i, ids := range map[int][]string{1: {"c1", "t0"}, 2: {"c2", "c3"}, 3: {"t1", "t2", "s1"}} {
		last := reqs[i].Contents[len(reqs[i].Contents)-1]
		var gotIDs []string
		for _, p := range last.Parts {
			if p.FunctionResponse != nil {
				gotIDs = append(gotIDs, p.FunctionResponse.ID)
			}
		}
		if diff := cmp.Diff(ids, gotIDs); diff != "" {
			t.Errorf("request %d: function responses (-want +got):\n%s", i+1, diff)
		}
	}
}

// shortTurn takes a turn together but answers one call fewer than asked.
type shortTurn struct{ fakeTools }

func (s *shortTurn) CallTurn(ctx context.Context, calls []agent.ToolCall) []agent.Response {
	var out []agent.Response
	for _, c := range calls[1:] {
		out = append(out, s.Call(ctx, c.Name, c.Args))
	}
	return out
}

// Tools that take a turn together but lose count give no call another
// call's response: every call of the turn is answered with an error.
func TestTurnToolsThatLoseCountAnswerNothing(t *testing.T) {
	f := geminitest.New(t,
		geminitest.One(geminitest.Call("a", "check_warranty", map[string]any{"serial_number": "SN1"}),
			geminitest.Call("b", "check_warranty", map[string]any{"serial_number": "SN2"})),
		geminitest.One(geminitest.Text("done")),
	)
	a := newAgent(t, gemini(f), &sleeps{}, nil)
	if _, err := a.Run(context.Background(), agent.Request{System: system, Prompt: prompt}, &shortTurn{}); err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	last := reqs[1].Contents[len(reqs[1].Contents)-1]
	var got []string
	for _, p := range last.Parts {
		if r := p.FunctionResponse; r != nil {
			got = append(got, fmt.Sprint(r.ID, " ", r.Response["ok"]))
		}
	}
	if diff := cmp.Diff([]string{"a false", "b false"}, got); diff != "" {
		t.Errorf("responses (-want +got):\n%s", diff)
	}
}
