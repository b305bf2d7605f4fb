package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"triage/internal/agent"
	"triage/internal/testkit/geminitest"
)

const (
	system   = "You are the warranty desk."
	prompt   = "My device SN1 stopped working."
	customer = "customer@example.com"
)

// functions are the declarations every test loop offers the model.
var functions = []*genai.FunctionDeclaration{
	{
		Name:        "check_warranty",
		Description: "Look up the warranty of a serial number.",
		ParametersJsonSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"serial_number": map[string]any{"type": "string"}},
			"required":   []any{"serial_number"},
		},
	},
	{
		Name:        "create_ticket",
		Description: "Open a support ticket.",
		ParametersJsonSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"summary": map[string]any{"type": "string"}},
			"required":   []any{"summary"},
		},
	},
	{
		Name:        "send_email",
		Description: "Send the reply to the customer.",
		ParametersJsonSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"to":      map[string]any{"type": "string"},
				"subject": map[string]any{"type": "string"},
				"body":    map[string]any{"type": "string"},
			},
			"required": []any{"to", "subject", "body"},
		},
	},
}

// fakeTools is a small warranty desk: it answers like the dispatcher would
// (envelopes, refusals) and records every call in order.
type fakeTools struct {
	mu     sync.Mutex
	calls  []string
	onCall func(name string) // optional hook, run before answering
}

func (f *fakeTools) StartTurn()  {}
func (f *fakeTools) Halt() error { return nil }

func (f *fakeTools) Call(ctx context.Context, name string, args map[string]any) agent.Response {
	f.mu.Lock()
	f.calls = append(f.calls, name+" "+geminitest.JSON(args))
	f.mu.Unlock()
	if f.onCall != nil {
		f.onCall(name)
	}
	fail := func(code agent.ErrorCode, msg string) agent.Response { return agent.Failed(code, msg) }
	okResult := agent.Succeeded
	switch name {
	case "check_warranty":
		serial, _ := args["serial_number"].(string)
		switch serial {
		case "":
			return fail("invalid_args", "serial_number is required")
		case "SN-DOWN":
			return fail("backend_unavailable", "warranty service did not answer")
		}
		return okResult(map[string]any{"serial_number": serial, "status": "valid"})
	case "create_ticket":
		return okResult(map[string]any{"ticket_id": "T-1"})
	case "send_email":
		if args["to"] != customer {
			return fail("recipient_not_allowed", "replies go to the sender only")
		}
		return okResult(map[string]any{"message_id": "<reply-1@example.com>"})
	}
	return fail("unknown_function", "no function "+name)
}

func (f *fakeTools) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// sleeps records the backoff delays the agent asked for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

const retryBase = 100 * time.Millisecond

func newAgent(t testing.TB, m agent.Model, sl *sleeps, tweak func(*agent.Config)) *agent.Agent {
	t.Helper()
	cfg := agent.Config{
		Model:     m,
		ModelName: "gemini-test",
		RetryBase: retryBase,
		RetryMax:  time.Second,
		Sleep:     sl.sleep,
	}
	if tweak != nil {
		tweak(&cfg)
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatalf("agent.New: %v", err)
	}
	return a
}

func request() agent.Request {
	return agent.Request{System: system, Prompt: prompt, Functions: functions, FinalFunction: "send_email"}
}

// textRequest has no final function: a text turn is the final answer.
func textRequest() agent.Request {
	r := request()
	r.FinalFunction = ""
	return r
}

// checkWire asserts what every request of a loop must carry: the model name,
// the system instruction, one tool with every declaration, mode AUTO,
// temperature 0, the prompt first, and a history that only grows.
func checkWire(t *testing.T, reqs []geminitest.Request) {
	t.Helper()
	var prev []string
	for i, r := range reqs {
		if r.Model != "gemini-test" {
			t.Errorf("request %d: model %q", i, r.Model)
		}
		if r.SystemInstruction == nil || len(r.SystemInstruction.Parts) != 1 || r.SystemInstruction.Parts[0].Text != system {
			t.Errorf("request %d: systemInstruction = %+v", i, r.SystemInstruction)
		}
		var names []string
		for _, tool := range r.Tools {
			for _, fd := range tool.FunctionDeclarations {
				names = append(names, fd.Name)
			}
		}
		if diff := cmp.Diff([]string{"check_warranty", "create_ticket", "send_email"}, names); len(r.Tools) != 1 || diff != "" {
			t.Errorf("request %d: %d tools, functionDeclarations (-want +got):\n%s", i, len(r.Tools), diff)
		}
		if r.ToolConfig == nil || r.ToolConfig.FunctionCallingConfig == nil || r.ToolConfig.FunctionCallingConfig.Mode != "AUTO" {
			t.Errorf("request %d: toolConfig = %+v, want functionCallingConfig.mode AUTO", i, r.ToolConfig)
		}
		if r.GenerationConfig == nil || r.GenerationConfig.Temperature == nil || *r.GenerationConfig.Temperature != 0 {
			t.Errorf("request %d: generationConfig = %+v, want temperature 0", i, r.GenerationConfig)
		}
		lines := geminitest.Transcript(r.Contents)
		if len(lines) == 0 || lines[0] != "user: text "+`"`+prompt+`"` {
			t.Errorf("request %d: history does not start with the prompt: %q", i, lines)
		}
		if len(lines) < len(prev) || len(prev) > 0 && cmp.Diff(prev, lines[:len(prev)]) != "" {
			t.Errorf("request %d: history rewritten:\nbefore %q\nnow    %q", i, prev, lines)
		}
		prev = lines
	}
}

// note is how the corrective user turn shows in a transcript.
const note = `user: text "Your previous reply could not be used (c..."`

// nudge is how the nudge after a text-only turn shows in a transcript.
const nudge = `user: text "Nothing has been sent yet: your last rep..."`

func TestRun(t *testing.T) {
	sendCustomer := geminitest.Call("s1", "send_email", map[string]any{"to": customer, "subject": "Re: SN1", "body": "Covered."})
	const sendCustomerCall = `send_email {"body":"Covered.","subject":"Re: SN1","to":"customer@example.com"}`
	checkSN1 := geminitest.Call("c1", "check_warranty", map[string]any{"serial_number": "SN1"})

	tests := []struct {
		name  string
		tweak func(*agent.Config)
		steps func(t *testing.T) []geminitest.Step
		want  agent.Result // Stop compared separately
		// wantStop is matched with errors.Is; nil means a normal end.
		wantStop   error
		wantCalls  []string
		wantSleeps int      // backoff sleeps, each longer than the one before
		wantLast   []string // transcript of the last request, when set
	}{
		{
			name: "happy path ends on the final function",
			steps: func(t *testing.T) []geminitest.Step {
				return []geminitest.Step{fixtureStep(t, 200, "turn_check_warranty.json"), fixtureStep(t, 200, "turn_send_email.json")}
			},
			want: agent.Result{Turns: 2, ModelCalls: 2, FinalCalled: true, Text: "Sending the reply now.",
				Usage: agent.Usage{Prompt: 412 + 530, Output: 18 + 61, Thoughts: 56 + 59, Total: 486 + 650}},
			wantCalls: []string{
				`check_warranty {"serial_number":"SN1"}`,
				`send_email {"body":"Your device SN1 is under warranty.","subject":"Re: SN1","to":"customer@example.com"}`,
			},
			wantLast: []string{
				`user: text "My device SN1 stopped working."`,
				`model: call call-1 check_warranty {"serial_number":"SN1"} sig=c2lnbmF0dXJlLTE=`,
				`user: response call-1 check_warranty ok`,
			},
		},
		{
			name: "text without the final function gets one nudge naming it, and recovers",
			steps: func(*testing.T) []geminitest.Step {
				return []geminitest.Step{geminitest.One(checkSN1), geminitest.One(geminitest.Text("I will send the reply now.")), geminitest.One(sendCustomer)}
			},
			want:      agent.Result{Turns: 3, ModelCalls: 3, FinalCalled: true, Usage: times(3)},
			wantCalls: []string{`check_warranty {"serial_number":"SN1"}`, sendCustomerCall},
			wantLast: []string{
				`user: text "My device SN1 stopped working."`,
				`model: call c1 check_warranty {"serial_number":"SN1"}`,
				`user: response c1 check_warranty ok`,
				`model: text "I will send the reply now."`,
				nudge,
			},
		},
		{
			name: "text without the final function twice: one nudge, then the loop gives up",
			steps: func(*testing.T) []geminitest.Step {
				return []geminitest.Step{geminitest.One(geminitest.Text("I will check the warranty now.")), geminitest.One(checkSN1), geminitest.One(geminitest.Text("Your warranty is valid."))}
			},
			want:      agent.Result{Turns: 3, ModelCalls: 3, Degraded: true, Text: "Your warranty is valid.", Usage: times(3)},
			wantCalls: []string{`check_warranty {"serial_number":"SN1"}`},
			wantStop:  agent.ErrNoFinalCall,
		},
		{
			name: "several calls in one turn run in order and go back together",
			steps: func(*testing.T) []geminitest.Step {
				return []geminitest.Step{
					geminitest.One(geminitest.Text("Checking both."),
						geminitest.Call("a", "check_warranty", map[string]any{"serial_number": "SN1"}),
						geminitest.Call("b", "check_warranty", map[string]any{"serial_number": "SN2"}),
						geminitest.Call("c", "create_ticket", map[string]any{"summary": "two devices"})),
					geminitest.One(sendCustomer),
				}
			},
			want: agent.Result{Turns: 2, ModelCalls: 2, FinalCalled: true, Usage: times(2)},
			wantCalls: []string{
				`check_warranty {"serial_number":"SN1"}`,
				`check_warranty {"serial_number":"SN2"}`,
				`create_ticket {"summary":"two devices"}`,
				sendCustomerCall,
			},
			wantLast: []string{
				`user: text "My device SN1 stopped working."`,
				`model: text "Checking both." | call a check_warranty {"serial_number":"SN1"} | call b check_warranty {"serial_number":"SN2"} | call c create_ticket {"summary":"two devices"}`,
				`user: response a check_warranty ok | response b check_warranty ok | response c create_ticket ok`,
			},
		},
		{
			name: "unknown function is refused and the loop converges",
			steps: func(*testing.T) []geminitest.Step {
				return []geminitest.Step{geminitest.One(geminitest.Call("x", "delete_everything", nil)), geminitest.One(sendCustomer)}
			},
			want:      agent.Result{Turns: 2, ModelCalls: 2, FinalCalled: true, Usage: times(2)},
			wantCalls: []string{`delete_everything {}`, sendCustomerCall},
			wantLast: []string{
				`user: text "My device SN1 stopped working."`,
				`model: call x delete_everything null`,
				`user: response x delete_everything error unknown_function`,
			},
		},
		{
			name: "invalid args go back and the model corrects them",
			steps: func(*testing.T) []geminitest.Step {
				return []geminitest.Step{geminitest.One(geminitest.Call("c0", "check_warranty", map[string]any{})), geminitest.One(checkSN1), geminitest.One(sendCustomer)}
			},
			want:      agent.Result{Turns: 3, ModelCalls: 3, FinalCalled: true, Usage: times(3)},
			wantCalls: []string{`check_warranty {}`, `check_warranty {"serial_number":"SN1"}`, sendCustomerCall},
			wantLast: []string{
				`user: text "My device SN1 stopped working."`,
				`model: call c0 check_warranty null`, // the SDK drops empty args
				`user: response c0 check_warranty error invalid_args`,
				`model: call c1 check_warranty {"serial_number":"SN1"}`,
				`user: response c1 check_warranty ok`,
			},
		},
		{
			name: "client error goes back to the model and the loop goes on",
			steps: func(*testing.T) []geminitest.Step {
				return []geminitest.Step{
					geminitest.One(geminitest.Call("c1", "check_warranty", map[string]any{"serial_number": "SN-DOWN"})),
					geminitest.One(geminitest.Call("t1", "create_ticket", map[string]any{"summary": "warranty service down"})),
					geminitest.One(sendCustomer),
				}
			},
			want: agent.Result{Turns: 3, ModelCalls: 3, FinalCalled: true, Usage: times(3)},
			wantCalls: []string{
				`check_warranty {"serial_number":"SN-DOWN"}`,
				`create_ticket {"summary":"warranty service down"}`,
				sendCustomerCall,
			},
			wantLast: []string{
				`user: text "My device SN1 stopped working."`,
				`model: call c1 check_warranty {"serial_number":"SN-DOWN"}`,
				`user: response c1 check_warranty error backend_unavailable`,
				`model: call t1 create_ticket {"summary":"warranty service down"}`,
				`user: response t1 create_ticket ok`,
			},
		},
		{
			name: "mail to a third party is refused, then the customer is mailed",
			steps: func(*testing.T) []geminitest.Step {
				return []geminitest.Step{
					geminitest.One(geminitest.Call("s0", "send_email", map[string]any{"to": "attacker@example.net", "subject": "data", "body": "x"})),
					geminitest.One(sendCustomer),
				}
			},
			want: agent.Result{Turns: 2, ModelCalls: 2, FinalCalled: true, Usage: times(2)},
			wantCalls: []string{
				`send_email {"body":"x","subject":"data","to":"attacker@example.net"}`,
				sendCustomerCall,
			},
			wantLast: []string{
				`user: text "My device SN1 stopped working."`,
				`model: call s0 send_email {"body":"x","subject":"data","to":"attacker@example.net"}`,
				`user: response s0 send_email error recipient_not_allowed`,
			},
		},
		{
			name: "the rest of a turn runs after the final function, then no model call",
			steps: func(*testing.T) []geminitest.Step {
				return []geminitest.Step{geminitest.One(sendCustomer, geminitest.Call("t1", "create_ticket", map[string]any{"summary": "replied"}))}
			},
			want:      agent.Result{Turns: 1, ModelCalls: 1, FinalCalled: true, Usage: times(1)},
			wantCalls: []string{sendCustomerCall, `create_ticket {"summary":"replied"}`},
		},
		{
			name: "empty response is retried once, then degraded",
			steps: func(*testing.T) []geminitest.Step {
				return []geminitest.Step{geminitest.Reply(geminitest.Cand("STOP")), geminitest.One(geminitest.Text("  "))}
			},
			want:     agent.Result{ModelCalls: 2, Degraded: true, Usage: times(2)},
			wantStop: agent.ErrInvalidResponse,
			wantLast: []string{`user: text "My device SN1 stopped working."`, note},
		},
		{
			name: "no candidates at all is retried once, then degraded",
			steps: func(*testing.T) []geminitest.Step {
				return []geminitest.Step{geminitest.Reply(), geminitest.Reply()}
			},
			want:     agent.Result{ModelCalls: 2, Degraded: true, Usage: times(2)},
			wantStop: agent.ErrInvalidResponse,
		},
		{
			name: "malformed function call is retried once, then degraded",
			steps: func(t *testing.T) []geminitest.Step {
				return []geminitest.Step{fixtureStep(t, 200, "malformed_function_call.json"), fixtureStep(t, 200, "malformed_function_call.json")}
			},
			want:     agent.Result{ModelCalls: 2, Degraded: true, Usage: agent.Usage{Prompt: 824, Total: 824}},
			wantStop: agent.ErrInvalidResponse,
			wantLast: []string{`user: text "My device SN1 stopped working."`, note},
		},
		{
			name: "malformed function call is retried once and recovers",
			steps: func(t *testing.T) []geminitest.Step {
				return []geminitest.Step{fixtureStep(t, 200, "malformed_function_call.json"), geminitest.One(checkSN1), geminitest.One(sendCustomer)}
			},
			want:      agent.Result{Turns: 2, ModelCalls: 3, FinalCalled: true, Usage: agent.Usage{Prompt: 412 + 200, Output: 40, Total: 412 + 260}},
			wantCalls: []string{`check_warranty {"serial_number":"SN1"}`, sendCustomerCall},
			wantLast: []string{
				`user: text "My device SN1 stopped working."`,
				note,
				`model: call c1 check_warranty {"serial_number":"SN1"}`,
				`user: response c1 check_warranty ok`,
			},
		},
		{
			name: "the invalid-response retry is once per email, not once in a row",
			steps: func(t *testing.T) []geminitest.Step {
				return []geminitest.Step{geminitest.Reply(geminitest.Cand("OTHER")), geminitest.One(checkSN1), geminitest.Reply(geminitest.Cand("SAFETY"))}
			},
			want:      agent.Result{Turns: 1, ModelCalls: 3, Degraded: true, Usage: times(3)},
			wantCalls: []string{`check_warranty {"serial_number":"SN1"}`},
			wantStop:  agent.ErrInvalidResponse,
		},
		{
			name: "first candidate blocked for safety, the second is used",
			steps: func(*testing.T) []geminitest.Step {
				return []geminitest.Step{
					geminitest.Reply(geminitest.Cand("SAFETY", geminitest.Text("unsafe")), geminitest.Cand("STOP", geminitest.Call("c2", "check_warranty", map[string]any{"serial_number": "SN1"}))),
					geminitest.One(sendCustomer),
				}
			},
			want:      agent.Result{Turns: 2, ModelCalls: 2, FinalCalled: true, Usage: times(2)},
			wantCalls: []string{`check_warranty {"serial_number":"SN1"}`, sendCustomerCall},
			wantLast: []string{
				`user: text "My device SN1 stopped working."`,
				`model: call c2 check_warranty {"serial_number":"SN1"}`,
				`user: response c2 check_warranty ok`,
			},
		},
		{
			name: "blocked prompt is retried once, then degraded",
			steps: func(*testing.T) []geminitest.Step {
				blocked := geminitest.Step{Body: `{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":7,"totalTokenCount":7}}`}
				return []geminitest.Step{blocked, blocked}
			},
			want:     agent.Result{ModelCalls: 2, Degraded: true, Usage: agent.Usage{Prompt: 14, Total: 14}},
			wantStop: agent.ErrInvalidResponse,
		},
		{
			name: "MAX_TOKENS text is invalid, MAX_TOKENS with a call is usable",
			steps: func(*testing.T) []geminitest.Step {
				return []geminitest.Step{geminitest.Reply(geminitest.Cand("MAX_TOKENS", geminitest.Text("Your warr"))), geminitest.Reply(geminitest.Cand("MAX_TOKENS", sendCustomer))}
			},
			want:      agent.Result{Turns: 1, ModelCalls: 2, FinalCalled: true, Usage: times(2)},
			wantCalls: []string{sendCustomerCall},
		},
		{
			name: "thought-only text is no answer",
			steps: func(*testing.T) []geminitest.Step {
				return []geminitest.Step{geminitest.One(geminitest.Obj("text", "thinking", "thought", true)), geminitest.One(geminitest.Obj("text", "thinking", "thought", true))}
			},
			want:     agent.Result{ModelCalls: 2, Degraded: true, Usage: times(2)},
			wantStop: agent.ErrInvalidResponse,
		},
		{
			name:  "max turns",
			tweak: func(c *agent.Config) { c.MaxTurns = 3 },
			steps: func(*testing.T) []geminitest.Step {
				return []geminitest.Step{geminitest.One(checkSN1), geminitest.One(checkSN1), geminitest.One(checkSN1)}
			},
			want: agent.Result{Turns: 3, ModelCalls: 3, Degraded: true, Usage: times(3)},
			wantCalls: []string{
				`check_warranty {"serial_number":"SN1"}`,
				`check_warranty {"serial_number":"SN1"}`,
				`check_warranty {"serial_number":"SN1"}`,
			},
			wantStop: agent.ErrMaxTurns,
		},
		{
			name: "503 then success is retried",
			steps: func(t *testing.T) []geminitest.Step {
				return []geminitest.Step{fixtureStep(t, 503, "error_503.json"), fixtureStep(t, 503, "error_503.json"), geminitest.One(sendCustomer)}
			},
			want:       agent.Result{Turns: 1, ModelCalls: 3, FinalCalled: true, Usage: times(1)},
			wantCalls:  []string{sendCustomerCall},
			wantSleeps: 2,
		},
		{
			name: "429 then success is retried",
			steps: func(t *testing.T) []geminitest.Step {
				return []geminitest.Step{fixtureStep(t, 429, "error_429.json"), geminitest.One(sendCustomer)}
			},
			want:       agent.Result{Turns: 1, ModelCalls: 2, FinalCalled: true, Usage: times(1)},
			wantCalls:  []string{sendCustomerCall},
			wantSleeps: 1,
		},
		{
			name: "dropped connection is retried",
			steps: func(t *testing.T) []geminitest.Step {
				return []geminitest.Step{{Drop: true}, geminitest.One(sendCustomer)}
			},
			want:       agent.Result{Turns: 1, ModelCalls: 2, FinalCalled: true, Usage: times(1)},
			wantCalls:  []string{sendCustomerCall},
			wantSleeps: 1,
		},
		{
			name:  "transient errors give up after MaxRetries",
			tweak: func(c *agent.Config) { c.MaxRetries = 2 },
			steps: func(t *testing.T) []geminitest.Step {
				s := fixtureStep(t, 503, "error_503.json")
				return []geminitest.Step{s, s, s}
			},
			want:       agent.Result{ModelCalls: 3, Degraded: true},
			wantStop:   agent.ErrModel,
			wantSleeps: 2,
		},
		{
			name: "permanent 400 stops at once",
			steps: func(t *testing.T) []geminitest.Step {
				return []geminitest.Step{fixtureStep(t, 400, "error_400.json")}
			},
			want:     agent.Result{ModelCalls: 1, Degraded: true},
			wantStop: agent.ErrModel,
		},
		{
			name: "403 after a turn stops at once",
			steps: func(t *testing.T) []geminitest.Step {
				return []geminitest.Step{geminitest.One(checkSN1), {Status: 403, Body: `{"error":{"code":403,"message":"Permission denied","status":"PERMISSION_DENIED"}}`}}
			},
			want:      agent.Result{Turns: 1, ModelCalls: 2, Degraded: true, Usage: times(1)},
			wantCalls: []string{`check_warranty {"serial_number":"SN1"}`},
			wantStop:  agent.ErrModel,
		},
		{
			name:     "per-turn timeout",
			tweak:    func(c *agent.Config) { c.TurnTimeout = 100 * time.Millisecond },
			steps:    func(*testing.T) []geminitest.Step { return []geminitest.Step{{Hang: true}} },
			want:     agent.Result{ModelCalls: 1, Degraded: true},
			wantStop: agent.ErrTurnTimeout,
		},
		{
			name:      "total deadline",
			tweak:     func(c *agent.Config) { c.Deadline = 200 * time.Millisecond },
			steps:     func(*testing.T) []geminitest.Step { return []geminitest.Step{geminitest.One(checkSN1), {Hang: true}} },
			want:      agent.Result{Turns: 1, ModelCalls: 2, Degraded: true, Usage: times(1)},
			wantCalls: []string{`check_warranty {"serial_number":"SN1"}`},
			wantStop:  agent.ErrDeadline,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := geminitest.New(t, tt.steps(t)...)
			sl := &sleeps{}
			a := newAgent(t, gemini(srv), sl, tt.tweak)
			tools := &fakeTools{}

			got, err := a.Run(context.Background(), request(), tools)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}

			if tt.wantStop == nil && got.Stop != nil || !errors.Is(got.Stop, tt.wantStop) {
				t.Errorf("Stop = %v, want %v", got.Stop, tt.wantStop)
			}
			got.Stop = nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCalls, tools.recorded()); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			reqs := srv.Requests()
			if len(reqs) != got.ModelCalls {
				t.Errorf("server saw %d requests, Result.ModelCalls = %d", len(reqs), got.ModelCalls)
			}
			if n := srv.Left(); n != 0 {
				t.Errorf("%d scripted replies not used", n)
			}
			checkWire(t, reqs)
			if tt.wantLast != nil {
				if diff := cmp.Diff(tt.wantLast, geminitest.Transcript(reqs[len(reqs)-1].Contents)); diff != "" {
					t.Errorf("last request contents (-want +got):\n%s", diff)
				}
			}
			checkBackoff(t, sl.got(), tt.wantSleeps)
		})
	}
}

// gemini is the agent's model on the real genai client pointed at f.
func gemini(f *geminitest.Server) agent.Model { return &agent.Gemini{Client: f.Client()} }

// usage is the usageMetadata every geminitest.Reply carries.
var usage = agent.Usage{Prompt: geminitest.PromptTokens, Output: geminitest.OutputTokens, Total: geminitest.TotalTokens}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fixtureStep(t *testing.T, status int, name string) geminitest.Step {
	return geminitest.Step{Status: status, Body: fixture(t, name)}
}
