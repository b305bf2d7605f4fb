package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"triage/internal/agent"
	"triage/internal/testkit/geminitest"
)

// The envelope is the model's contract: these are its exact bytes.
func TestResponseEnvelope(t *testing.T) {
	tests := []struct {
		name string
		r    agent.Response
		want string
	}{
		{"a result", agent.Succeeded(map[string]any{"status": "valid", "n": 2}), `{"ok":true,"result":{"n":2,"status":"valid"}}`},
		{"an empty result", agent.Succeeded(map[string]any{}), `{"ok":true,"result":{}}`},
		{"an error", agent.Failed("invalid_args", "serial_number is required"), `{"error":{"code":"invalid_args","message":"serial_number is required"},"ok":false}`},
		{"no response", agent.Response{}, `{"error":{"code":"internal","message":"no response from tool"},"ok":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.r.Envelope())
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("envelope %s, want %s", b, tt.want)
			}
		})
	}
	// The code is a plain string, as a model reading its history decodes it.
	env := agent.Failed("unknown_function", "x").Envelope()
	if _, ok := env["error"].(map[string]any)["code"].(string); !ok {
		t.Errorf("code is %T, want string", env["error"].(map[string]any)["code"])
	}
}

func TestToolErrorText(t *testing.T) {
	e := &agent.ToolError{Code: "recipient_not_allowed", Message: "to must be the customer's reply address"}
	if got, want := e.Error(), "recipient_not_allowed: to must be the customer's reply address"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// The function responses reach Gemini as the envelopes, byte for byte.
func TestResponseOnTheWire(t *testing.T) {
	f := geminitest.New(t,
		geminitest.One(geminitest.Call("c1", "check_warranty", map[string]any{"serial_number": ""}),
			geminitest.Call("c2", "check_warranty", map[string]any{"serial_number": "SN1"})),
		geminitest.One(geminitest.Text("done")))
	a := newAgent(t, gemini(f), &sleeps{}, nil)
	if _, err := a.Run(context.Background(), textRequest(), &fakeTools{}); err != nil {
		t.Fatal(err)
	}
	bodies := f.Bodies()
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	for _, want := range []string{
		`"response":{"error":{"code":"invalid_args","message":"serial_number is required"},"ok":false}`,
		`"response":{"ok":true,"result":{"serial_number":"SN1","status":"valid"}}`,
	} {
		if !strings.Contains(string(bodies[1]), want) {
			t.Errorf("second request lacks %s:\n%s", want, bodies[1])
		}
	}
}

// turnTools counts the turns the loop starts and halts when told to.
type turnTools struct {
	fakeTools
	turns  int
	halts  int
	haltAt int // the turn after whose calls Halt says stop; 0 never
}

func (h *turnTools) StartTurn() { h.turns++ }

func (h *turnTools) Halt() error {
	h.halts++
	if h.haltAt != 0 && h.turns >= h.haltAt {
		return errHalt
	}
	return nil
}

var errHalt = errors.New("the mail server refused the reply for good")

// The loop starts a turn before each turn's calls, and asks Halt after
// them: a halt ends the loop without another model call.
func TestHaltEndsTheLoop(t *testing.T) {
	f := geminitest.New(t,
		geminitest.One(geminitest.Call("c1", "check_warranty", map[string]any{"serial_number": "SN1"})),
		geminitest.One(geminitest.Call("c2", "create_ticket", map[string]any{"summary": "broken"}),
			geminitest.Call("c3", "check_warranty", map[string]any{"serial_number": "SN1"})),
		geminitest.One(geminitest.Text("never asked")))
	tools := &turnTools{haltAt: 2}
	a := newAgent(t, gemini(f), &sleeps{}, nil)
	res, err := a.Run(context.Background(), request(), tools)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Stop, errHalt) || !res.Degraded {
		t.Errorf("Stop = %v, Degraded %v; want the halt", res.Stop, res.Degraded)
	}
	if tools.turns != 2 || tools.halts != 2 {
		t.Errorf("%d turns started, Halt asked %d times; want 2, 2", tools.turns, tools.halts)
	}
	if n := len(f.Requests()); n != 2 {
		t.Errorf("%d model calls, want 2", n)
	}
}

// A turn whose final call succeeded ends the loop whatever Halt would say.
func TestFinalCallIsNotHalted(t *testing.T) {
	f := geminitest.New(t,
		geminitest.One(geminitest.Call("c1", "send_email", map[string]any{"to": customer, "subject": "Re", "body": "hi"})))
	tools := &turnTools{haltAt: 1}
	a := newAgent(t, gemini(f), &sleeps{}, nil)
	res, err := a.Run(context.Background(), request(), tools)
	if err != nil {
		t.Fatal(err)
	}
	if !res.FinalCalled || res.Stop != nil || tools.halts != 0 {
		t.Errorf("FinalCalled %v, Stop %v, Halt asked %d times; want true, nil, 0", res.FinalCalled, res.Stop, tools.halts)
	}
}
