package agent_test

// A scripted Gemini server on loopback that speaks the real REST format, and
// the helpers to build its replies and read back what the client sent.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"triage/internal/agent"
)

// step is one scripted answer of the fake server.
type step struct {
	status int    // HTTP status; 0 means 200
	body   string // JSON body
	hang   bool   // answer nothing until the request is canceled
	drop   bool   // close the connection without an answer
}

// fakeGemini serves POST /v1beta/models/{model}:generateContent from a queue
// of steps and records every request body. A request past the end of the
// queue fails the test: no test expects more model calls than it scripted.
type fakeGemini struct {
	t     testing.TB
	srv   *httptest.Server
	mu    sync.Mutex
	steps []step
	reqs  []recorded
}

type recorded struct {
	model string
	body  []byte
}

var generatePath = regexp.MustCompile(`^/v1beta/models/([^/:]+):generateContent$`)

func newFakeGemini(t testing.TB, steps ...step) *fakeGemini {
	t.Helper()
	f := &fakeGemini{t: t, steps: steps}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGemini) serve(w http.ResponseWriter, r *http.Request) {
	m := generatePath.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodPost || m == nil {
		f.t.Errorf("fake gemini: unexpected %s %s", r.Method, r.URL.Path)
		http.Error(w, `{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`, http.StatusNotFound)
		return
	}
	if got := r.Header.Get("x-goog-api-key"); got != "test" {
		f.t.Errorf("fake gemini: x-goog-api-key = %q, want %q", got, "test")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("fake gemini: read body: %v", err)
	}

	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{model: m[1], body: body})
	n := len(f.reqs)
	var s step
	ok := len(f.steps) > 0
	if ok {
		s, f.steps = f.steps[0], f.steps[1:]
	}
	f.mu.Unlock()

	switch {
	case !ok:
		f.t.Errorf("fake gemini: unexpected model call #%d (script exhausted)", n)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":{"code":500,"message":"script exhausted","status":"INTERNAL"}}`)
	case s.hang:
		<-r.Context().Done()
	case s.drop:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			f.t.Errorf("fake gemini: hijack: %v", err)
			return
		}
		conn.Close()
	default:
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		if s.status != 0 {
			w.WriteHeader(s.status)
		}
		fmt.Fprint(w, s.body)
	}
}

// model returns the real genai client pointed at the fake server, wrapped
// in agent.Gemini.
func (f *fakeGemini) model() agent.Model {
	f.t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      "test",
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: f.srv.URL},
	})
	if err != nil {
		f.t.Fatalf("genai.NewClient: %v", err)
	}
	return &agent.Gemini{Client: c}
}

// requests decodes every request body received so far.
func (f *fakeGemini) requests() []wireRequest {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]wireRequest, len(f.reqs))
	for i, r := range f.reqs {
		if err := json.Unmarshal(r.body, &out[i]); err != nil {
			f.t.Fatalf("request %d: %v\n%s", i, err, r.body)
		}
		out[i].model = r.model
	}
	return out
}

// left reports how many scripted steps were not consumed.
func (f *fakeGemini) left() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.steps)
}

// wireRequest is the part of a GenerateContentRequest the tests look at,
// decoded from the JSON on the wire (not from SDK types).
type wireRequest struct {
	model             string
	Contents          []wireContent `json:"contents"`
	SystemInstruction *wireContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	ToolConfig *struct {
		FunctionCallingConfig *struct {
			Mode string `json:"mode"`
		} `json:"functionCallingConfig"`
	} `json:"toolConfig"`
	GenerationConfig *struct {
		Temperature *float64 `json:"temperature"`
	} `json:"generationConfig"`
}

type wireContent struct {
	Role  string     `json:"role"`
	Parts []wirePart `json:"parts"`
}

type wirePart struct {
	Text             string `json:"text"`
	ThoughtSignature string `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string         `json:"id"`
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string         `json:"id"`
		Name     string         `json:"name"`
		Response map[string]any `json:"response"`
	} `json:"functionResponse"`
}

// transcript renders contents one line per Content, parts joined by " | ":
//
//	user: text "..."
//	model: call call-1 check_warranty {"serial_number":"SN1"} sig=c2ln...
//	user: response call-1 check_warranty ok | response call-2 x error unknown_function
func transcript(contents []wireContent) []string {
	lines := make([]string, len(contents))
	for i, c := range contents {
		parts := make([]string, len(c.Parts))
		for j, p := range c.Parts {
			var s string
			switch {
			case p.FunctionCall != nil:
				s = fmt.Sprintf("call %s %s %s", p.FunctionCall.ID, p.FunctionCall.Name, jsonString(p.FunctionCall.Args))
			case p.FunctionResponse != nil:
				s = fmt.Sprintf("response %s %s %s", p.FunctionResponse.ID, p.FunctionResponse.Name, envelopeSummary(p.FunctionResponse.Response))
			default:
				t := p.Text
				if len(t) > 40 {
					t = t[:40] + "..."
				}
				s = fmt.Sprintf("text %q", t)
			}
			if p.ThoughtSignature != "" {
				s += " sig=" + p.ThoughtSignature
			}
			parts[j] = s
		}
		lines[i] = c.Role + ": " + strings.Join(parts, " | ")
	}
	return lines
}

func envelopeSummary(env map[string]any) string {
	if ok, _ := env["ok"].(bool); ok {
		return "ok"
	}
	e, _ := env["error"].(map[string]any)
	return fmt.Sprintf("error %v", e["code"])
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("!%v", err)
	}
	return string(b)
}

// Reply builders in the REST shape of GenerateContentResponse.

func part(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func call(id, name string, args map[string]any) map[string]any {
	return part("functionCall", part("id", id, "name", name, "args", args))
}

func text(s string) map[string]any { return part("text", s) }

func cand(finish string, parts ...map[string]any) map[string]any {
	c := part("finishReason", finish)
	if parts != nil {
		c["content"] = part("role", "model", "parts", parts)
	}
	return c
}

// usage is the usageMetadata every reply() carries.
var usage = agent.Usage{Prompt: 100, Output: 20, Total: 130}

func reply(cands ...map[string]any) step {
	return step{body: jsonString(part(
		"candidates", cands,
		"usageMetadata", part("promptTokenCount", usage.Prompt, "candidatesTokenCount", usage.Output, "totalTokenCount", usage.Total),
		"modelVersion", "gemini-test",
	))}
}

// one is a reply with a single STOP candidate holding parts.
func one(parts ...map[string]any) step { return reply(cand("STOP", parts...)) }

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fixtureStep(t *testing.T, status int, name string) step {
	return step{status: status, body: fixture(t, name)}
}
