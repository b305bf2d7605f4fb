package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"triage/internal/agent"
	"triage/internal/model"
	"triage/internal/testkit/openaitest"
)

func openAIClient(t *testing.T, srv *openaitest.Server) *model.OpenAI {
	t.Helper()
	c, err := model.NewOpenAI(model.OpenAIConfig{BaseURL: srv.BaseURL(), APIKey: openaitest.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHistoryOnTheWire: the conversation goes out as chat messages: the
// system instruction, the user's text, the assistant's tool calls (ids as
// the model gave them, arguments as a JSON string) and one tool message per
// response answering its call's id; tools carry the declared JSON Schema.
func TestHistoryOnTheWire(t *testing.T) {
	srv := openaitest.New(t, openaitest.Calls(openaitest.Call{ID: "call_a", Name: "check_warranty", Args: map[string]any{"serial_number": "SN1"}}),
		openaitest.Calls(openaitest.Call{ID: "call_b", Name: "send_email", Args: map[string]any{"to": customer, "body": "ok"}}))
	a, err := agent.New(agent.Config{Model: openAIClient(t, srv), ModelName: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), agent.Request{System: "sys", Prompt: "hello", Functions: functions, FinalFunction: "send_email"}, &desk{})
	if err != nil || !res.FinalCalled {
		t.Fatalf("Run: %+v, %v", res, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var got []string
	for _, m := range reqs[1].Messages {
		b, _ := json.Marshal(m)
		got = append(got, string(b))
	}
	want := []string{
		`{"content":"sys","role":"system"}`,
		`{"content":"hello","role":"user"}`,
		`{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"serial_number\":\"SN1\"}","name":"check_warranty"},"id":"call_a","type":"function"}]}`,
		`{"content":"{\"ok\":true,\"result\":{\"expiration_date\":\"2027-05-01\",\"status\":\"valid\"}}","role":"tool","tool_call_id":"call_a"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if reqs[0].Model != "gpt-test" || reqs[0].ToolChoice != "auto" || len(reqs[0].Tools) != len(functions) {
		t.Errorf("request: model %q, tool_choice %q, %d tools", reqs[0].Model, reqs[0].ToolChoice, len(reqs[0].Tools))
	}
	fn, _ := reqs[0].Tools[0]["function"].(map[string]any)
	if diff := cmp.Diff(functions[0].ParametersJsonSchema, fn["parameters"]); diff != "" || fn["name"] != "check_warranty" {
		t.Errorf("tool %v: parameters (-want +got):\n%s", fn["name"], diff)
	}
}

// TestStructuredResponse: a structured call (a JSON MIME type and a
// genai.Schema, as the eval's judge sends) becomes a json_schema response format in JSON Schema
// terms, and the JSON text comes back as the candidate's text.
func TestStructuredResponse(t *testing.T) {
	srv := openaitest.New(t, openaitest.Text(`{"scenario":"valid-warranty","reason":"serial and fault"}`))
	resp, err := openAIClient(t, srv).GenerateContent(context.Background(), "gpt-test",
		[]*genai.Content{genai.NewContentFromText("classify", genai.RoleUser)},
		&genai.GenerateContentConfig{ResponseMIMEType: "application/json", ResponseSchema: &genai.Schema{
			Type: genai.TypeObject, Required: []string{"scenario"},
			Properties: map[string]*genai.Schema{
				"scenario": {Type: genai.TypeString, Enum: []string{"valid-warranty", "out-of-scope"}},
				"reason":   {Type: genai.TypeString, Nullable: genai.Ptr(true)},
			}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Text(); got != `{"scenario":"valid-warranty","reason":"serial and fault"}` {
		t.Errorf("text %q", got)
	}
	want := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "response", "schema": map[string]any{
		"type": "object", "required": []any{"scenario"},
		"properties": map[string]any{
			"scenario": map[string]any{"type": "string", "enum": []any{"valid-warranty", "out-of-scope"}},
			"reason":   map[string]any{"type": []any{"string", "null"}},
		}}}}
	if diff := cmp.Diff(want, srv.Requests()[0].ResponseFormat); diff != "" {
		t.Errorf("response_format (-want +got):\n%s", diff)
	}
	if u := resp.UsageMetadata; u == nil || u.TotalTokenCount != openaitest.TotalTokens || resp.ModelVersion != openaitest.Model {
		t.Errorf("usage %+v, model %q", u, resp.ModelVersion)
	}
}

// TestAnswers: how answers the agent cannot use arrive as genai candidates.
func TestAnswers(t *testing.T) {
	for _, tt := range []struct {
		name   string
		step   openaitest.Step
		finish genai.FinishReason
		parts  int
	}{
		{"arguments that are not JSON", openaitest.RawCall("c1", "check_warranty", `{"serial_number": "SN1"`), genai.FinishReasonMalformedFunctionCall, 0},
		{"a refusal", openaitest.Refusal("I can't help with that."), genai.FinishReasonSafety, 0},
		{"the content filter", openaitest.Filtered(), genai.FinishReasonSafety, 0},
		{"text", openaitest.Text("hi"), genai.FinishReasonStop, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, tt.step)
			resp, err := openAIClient(t, srv).GenerateContent(context.Background(), "m", []*genai.Content{genai.NewContentFromText("x", genai.RoleUser)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			c := resp.Candidates[0]
			parts := 0
			if c.Content != nil {
				parts = len(c.Content.Parts)
			}
			if c.FinishReason != tt.finish || parts != tt.parts {
				t.Errorf("finish %s with %d parts, want %s with %d", c.FinishReason, parts, tt.finish, tt.parts)
			}
		})
	}
}

// TestErrors: an error answer is a genai.APIError with the HTTP status and
// the API's message, temporary for 429 and 5xx.
func TestErrors(t *testing.T) {
	for _, tt := range []struct {
		step      openaitest.Step
		temporary bool
	}{
		{openaitest.Error(429, "Rate limit reached", "rate_limit_exceeded"), true},
		{openaitest.Error(503, "overloaded", "server_error"), true},
		{openaitest.Error(401, "Incorrect API key provided", "invalid_request_error"), false},
		{openaitest.Step{Status: 502, Body: "<html>bad gateway</html>"}, true},
	} {
		srv := openaitest.New(t, tt.step)
		_, err := openAIClient(t, srv).GenerateContent(context.Background(), "m", []*genai.Content{genai.NewContentFromText("x", genai.RoleUser)}, nil)
		var ae genai.APIError
		if !errors.As(err, &ae) || ae.Code != tt.step.Status || agent.Temporary(err) != tt.temporary {
			t.Errorf("%d: err %v (temporary %v)", tt.step.Status, err, agent.Temporary(err))
			continue
		}
		if !strings.Contains(tt.step.Body, ae.Message) {
			t.Errorf("%d: message %q not from the body %s", tt.step.Status, ae.Message, tt.step.Body)
		}
	}
}

// TestNoKeyNoHeader: a local server without a key gets no Authorization.
func TestNoKeyNoHeader(t *testing.T) {
	seen := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Get("Authorization")
		w.Write([]byte(openaitest.Text("hi").Body))
	}))
	defer srv.Close()
	c, err := model.NewOpenAI(model.OpenAIConfig{BaseURL: srv.URL + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GenerateContent(context.Background(), "llama3.1", []*genai.Content{genai.NewContentFromText("x", genai.RoleUser)}, nil); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != "" {
		t.Errorf("Authorization %q sent without a key", got)
	}
	if _, err := model.NewOpenAI(model.OpenAIConfig{BaseURL: "localhost:11434"}); err == nil {
		t.Error("a base URL without a scheme was accepted")
	}
}

// TestRedirectKeepsKey: an endpoint that redirects to another port of the
// same host (another server) is refused before the key is sent there; a
// redirect within the endpoint's own origin is followed.
func TestRedirectKeepsKey(t *testing.T) {
	var sawKey, reached atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Store(true)
		sawKey.Store(r.Header.Get("Authorization") != "")
		w.Write([]byte(openaitest.Text("hi").Body))
	}))
	defer other.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/moved/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v1/here", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/v1/here", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(openaitest.Text("same origin").Body))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	// The listener's host with another port: the origin differs by port only.
	if strings.Split(strings.TrimPrefix(srv.URL, "http://"), ":")[0] != strings.Split(strings.TrimPrefix(other.URL, "http://"), ":")[0] {
		t.Fatalf("servers on different hosts: %s, %s", srv.URL, other.URL)
	}
	contents := []*genai.Content{genai.NewContentFromText("x", genai.RoleUser)}

	c, err := model.NewOpenAI(model.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-secret"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GenerateContent(context.Background(), "m", contents, nil)
	if err == nil || !strings.Contains(err.Error(), "redirect to another origin") {
		t.Errorf("redirect to another port: err = %v, want it refused", err)
	}
	if reached.Load() || sawKey.Load() {
		t.Errorf("the other listener was reached (%v) and saw the key (%v)", reached.Load(), sawKey.Load())
	}

	c, err = model.NewOpenAI(model.OpenAIConfig{BaseURL: srv.URL + "/moved/v1", APIKey: "sk-secret"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.GenerateContent(context.Background(), "m", contents, nil)
	if err != nil || resp.Text() != "same origin" {
		t.Errorf("redirect within the origin: %v, %v", resp, err)
	}
}
