// Package openaitest runs a scripted OpenAI-compatible Chat Completions
// server for tests: an httptest server on loopback that answers POST
// /v1/chat/completions in the real wire format from a queue of steps, and
// records every request for the test to read back. Builders write answers
// in the ChatCompletion shape: text, tool calls (arguments as a JSON
// string, as the API sends them), a refusal, an error.
package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// APIKey is the bearer token the server requires.
const APIKey = "sk-test"

// Model is the model every answer names.
const Model = "gpt-test"

// The usage every answer carries.
const (
	PromptTokens     = 100
	CompletionTokens = 20
	TotalTokens      = 120
)

// Step is one scripted answer of the server.
type Step struct {
	Status int               // HTTP status; 0 means 200
	Header map[string]string // extra response headers (Retry-After)
	Body   string            // JSON body
}

// Server serves chat completions from a queue of steps. A request past the
// end of the queue fails the test.
type Server struct {
	t     testing.TB
	srv   *httptest.Server
	mu    sync.Mutex
	steps []Step
	reqs  [][]byte
}

// New starts a server that plays steps in order; it stops at test cleanup.
func New(t testing.TB, steps ...Step) *Server {
	t.Helper()
	f := &Server{t: t, steps: steps}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// BaseURL is the API root to configure the client with (".../v1").
func (f *Server) BaseURL() string { return f.srv.URL + "/v1" }

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		f.t.Errorf("fake openai: unexpected %s %s", r.Method, r.URL.Path)
		writeError(w, http.StatusNotFound, "not found", "invalid_request_error")
		return
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+APIKey {
		f.t.Errorf("fake openai: Authorization = %q, want the bearer key", got)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("fake openai: read body: %v", err)
	}
	var probe map[string]any
	if err := json.Unmarshal(body, &probe); err != nil {
		f.t.Errorf("fake openai: request is not JSON: %v", err)
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, body)
	n := len(f.reqs)
	var s Step
	ok := len(f.steps) > 0
	if ok {
		s, f.steps = f.steps[0], f.steps[1:]
	}
	f.mu.Unlock()
	if !ok {
		f.t.Errorf("fake openai: unexpected model call #%d (script exhausted)", n)
		writeError(w, http.StatusInternalServerError, "script exhausted", "server_error")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	for k, v := range s.Header {
		w.Header().Set(k, v)
	}
	if s.Status != 0 {
		w.WriteHeader(s.Status)
	}
	io.WriteString(w, s.Body)
}

func writeError(w http.ResponseWriter, status int, msg, typ string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, Error(status, msg, typ).Body)
}

// Request is one recorded request, decoded.
type Request struct {
	Model          string           `json:"model"`
	Messages       []map[string]any `json:"messages"`
	Tools          []map[string]any `json:"tools"`
	ToolChoice     string           `json:"tool_choice"`
	MaxTokens      int              `json:"max_tokens"`
	ResponseFormat map[string]any   `json:"response_format"`
}

// Bodies returns every request body so far, as sent.
func (f *Server) Bodies() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.reqs...)
}

// Requests returns every request so far, decoded.
func (f *Server) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Request, len(f.reqs))
	for i, b := range f.reqs {
		if err := json.Unmarshal(b, &out[i]); err != nil {
			f.t.Errorf("fake openai: request %d: %v", i, err)
		}
	}
	return out
}

// Left is how many scripted steps were not played.
func (f *Server) Left() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.steps)
}

// Call is one tool call of an answer.
type Call struct {
	ID, Name string
	Args     map[string]any
}

// Calls answers with tool calls (finish_reason tool_calls).
func Calls(calls ...Call) Step {
	tcs := make([]map[string]any, len(calls))
	for i, c := range calls {
		args, _ := json.Marshal(c.Args)
		tcs[i] = map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": string(args)}}
	}
	return answer(map[string]any{"role": "assistant", "content": nil, "tool_calls": tcs}, "tool_calls")
}

// RawCall answers with one tool call whose arguments string is given as is
// (e.g. not JSON).
func RawCall(id, name, arguments string) Step {
	return answer(map[string]any{"role": "assistant", "content": nil, "tool_calls": []map[string]any{
		{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": arguments}}}}, "tool_calls")
}

// Text answers with a text message.
func Text(s string) Step {
	return answer(map[string]any{"role": "assistant", "content": s}, "stop")
}

// Refusal answers with a refusal (the model declines by policy).
func Refusal(s string) Step {
	return answer(map[string]any{"role": "assistant", "content": nil, "refusal": s}, "stop")
}

// Filtered answers with a message cut by the content filter.
func Filtered() Step {
	return answer(map[string]any{"role": "assistant", "content": ""}, "content_filter")
}

// Error answers with an API error.
func Error(status int, msg, typ string) Step {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil}})
	return Step{Status: status, Body: string(b)}
}

// Cut answers with one tool call whose arguments were cut at the token
// limit (finish_reason length): arguments is the cut JSON text.
func Cut(id, name, arguments string) Step {
	return answer(map[string]any{"role": "assistant", "content": nil, "tool_calls": []map[string]any{
		{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": arguments}}}}, "length")
}

func answer(msg map[string]any, finish string) Step {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1700000000, "model": Model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": PromptTokens, "completion_tokens": CompletionTokens, "total_tokens": TotalTokens},
	})
	return Step{Body: string(b)}
}
