package model_test

import (
	"context"
	"strings"
	"testing"

	"triage/internal/agent"
	"triage/internal/testkit/geminitest"
	"triage/internal/testkit/openaitest"
)

// TestOutputBoundSent: every loop turn carries the max output tokens bound
// (the default when none is set), on both providers.
func TestOutputBoundSent(t *testing.T) {
	for _, tt := range []struct {
		set, want int
	}{{0, agent.DefaultMaxOutputTokens}, {512, 512}} {
		g := geminitest.New(t, geminiSteps([]turn{{calls: []scriptedCall{check}}, {calls: []scriptedCall{send}}})...)
		o := openaitest.New(t, openaiSteps([]turn{{calls: []scriptedCall{check}}, {calls: []scriptedCall{send}}})...)
		for _, m := range []agent.Model{&agent.Gemini{Client: g.Client()}, openAIClient(t, o)} {
			a, err := agent.New(agent.Config{Model: m, MaxOutputTokens: int32(tt.set)})
			if err != nil {
				t.Fatal(err)
			}
			if res, err := a.Run(context.Background(), agent.Request{System: "sys", Prompt: "hi", Functions: functions, FinalFunction: "send_email"}, &desk{}); err != nil || !res.FinalCalled {
				t.Fatalf("Run: %+v, %v", res, err)
			}
		}
		for i, r := range g.Requests() {
			if r.GenerationConfig == nil || r.GenerationConfig.MaxOutputTokens != tt.want {
				t.Errorf("set %d: Gemini request %d: generationConfig %+v, want maxOutputTokens %d", tt.set, i, r.GenerationConfig, tt.want)
			}
		}
		for i, r := range o.Requests() {
			if r.MaxTokens != tt.want {
				t.Errorf("set %d: OpenAI request %d: max_tokens %d, want %d", tt.set, i, r.MaxTokens, tt.want)
			}
		}
	}
}

// TestToolChoiceRequired: with ToolChoiceRequired every turn of a loop with
// a final function must call one (Gemini mode ANY, tool_choice required);
// by default the model may answer in text (AUTO, auto).
func TestToolChoiceRequired(t *testing.T) {
	for _, tt := range []struct {
		choice             agent.ToolChoice
		wantGemini, wantAI string
	}{{"", "AUTO", "auto"}, {agent.ToolChoiceRequired, "ANY", "required"}} {
		g := geminitest.New(t, geminiSteps([]turn{{calls: []scriptedCall{send}}})...)
		o := openaitest.New(t, openaiSteps([]turn{{calls: []scriptedCall{send}}})...)
		for _, m := range []agent.Model{&agent.Gemini{Client: g.Client()}, openAIClient(t, o)} {
			a, err := agent.New(agent.Config{Model: m, ToolChoice: tt.choice})
			if err != nil {
				t.Fatal(err)
			}
			if res, err := a.Run(context.Background(), agent.Request{Prompt: "hi", Functions: functions, FinalFunction: "send_email"}, &desk{}); err != nil || !res.FinalCalled {
				t.Fatalf("Run: %+v, %v", res, err)
			}
		}
		if r := g.Requests()[0]; r.ToolConfig == nil || r.ToolConfig.FunctionCallingConfig == nil || r.ToolConfig.FunctionCallingConfig.Mode != tt.wantGemini {
			t.Errorf("choice %q: Gemini toolConfig %+v, want mode %s", tt.choice, r.ToolConfig, tt.wantGemini)
		}
		if r := o.Requests()[0]; r.ToolChoice != tt.wantAI {
			t.Errorf("choice %q: tool_choice %q, want %q", tt.choice, r.ToolChoice, tt.wantAI)
		}
	}
	if _, err := agent.New(agent.Config{Model: &desk2{}, ToolChoice: "sometimes"}); err == nil {
		t.Error("an unknown tool choice was accepted")
	}
}

type desk2 struct{ agent.Model }

// TestCutAnswerSaysWhy: a turn cut at the output token limit (OpenAI
// finish_reason length with half a tool call; Gemini MAX_TOKENS without
// content) stops the loop with a reason that names the limit, not as a
// malformed call.
func TestCutAnswerSaysWhy(t *testing.T) {
	cut := openaitest.Cut("c1", "send_email", `{"to":"customer@example.com","body":"Dear cust`)
	o := openaitest.New(t, cut, cut)
	g := geminitest.New(t, geminitest.Reply(geminitest.Cand("MAX_TOKENS")), geminitest.Reply(geminitest.Cand("MAX_TOKENS")))
	for name, m := range map[string]agent.Model{"openai": openAIClient(t, o), "gemini": &agent.Gemini{Client: g.Client()}} {
		a, err := agent.New(agent.Config{Model: m})
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Run(context.Background(), agent.Request{Prompt: "hi", Functions: functions, FinalFunction: "send_email"}, &desk{})
		if err != nil {
			t.Fatal(err)
		}
		stop := ""
		if res.Stop != nil {
			stop = res.Stop.Error()
		}
		if !strings.Contains(stop, "output token limit") || strings.Contains(stop, "MALFORMED") {
			t.Errorf("%s: stop %q, want it to name the output token limit", name, stop)
		}
		if name == "openai" && !strings.Contains(stop, "finish_reason length") {
			t.Errorf("openai: stop %q does not name the endpoint's finish_reason", stop)
		}
	}
}
