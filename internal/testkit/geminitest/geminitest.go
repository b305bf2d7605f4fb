// Package geminitest runs a scripted Gemini server for tests: an httptest
// server on loopback that answers POST /v1beta/models/{model}:generateContent
// in the real REST format from a queue of steps, so tests drive the real genai
// SDK against a model that says exactly what the test wants (including
// breaking the rules on purpose). It records every request for the test to
// read back, and has builders for replies in the GenerateContentResponse shape.
// It is the one way the tests fake Gemini over HTTP; the built-in offline
// model (internal/model) is a product feature, not this.
package geminitest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"
)

// APIKey is the key Client sends and the server requires.
const APIKey = "test"

// ModelVersion is the modelVersion every Reply carries.
const ModelVersion = "gemini-test"

// The usageMetadata every Reply carries.
const (
	PromptTokens = 100
	OutputTokens = 20
	TotalTokens  = 130
)

// Step is one scripted answer of the server.
type Step struct {
	Status int    // HTTP status; 0 means 200
	Body   string // JSON body
	Hang   bool   // answer nothing until the request is canceled
	Drop   bool   // close the connection without an answer
}

// Server serves generateContent from a queue of steps and records every
// request body. A request past the end of the queue fails the test: no test
// expects more model calls than it scripted.
type Server struct {
	t     testing.TB
	srv   *httptest.Server
	mu    sync.Mutex
	steps []Step
	reqs  []recorded
}

type recorded struct {
	model string
	body  []byte
}

var generatePath = regexp.MustCompile(`^/v1beta/models/([^/:]+):generateContent$`)

// New starts a server that plays steps in order; it stops at test cleanup.
func New(t testing.TB, steps ...Step) *Server {
	t.Helper()
	f := &Server{t: t, steps: steps}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	m := generatePath.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodPost || m == nil {
		f.t.Errorf("fake gemini: unexpected %s %s", r.Method, r.URL.Path)
		http.Error(w, `{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`, http.StatusNotFound)
		return
	}
	if got := r.Header.Get("x-goog-api-key"); got != APIKey {
		f.t.Errorf("fake gemini: x-goog-api-key = %q, want %q", got, APIKey)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("fake gemini: read body: %v", err)
	}

	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{model: m[1], body: body})
	n := len(f.reqs)
	var s Step
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
	case s.Hang:
		<-r.Context().Done()
	case s.Drop:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			f.t.Errorf("fake gemini: hijack: %v", err)
			return
		}
		conn.Close()
	default:
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		if s.Status != 0 {
			w.WriteHeader(s.Status)
		}
		fmt.Fprint(w, s.Body)
	}
}

// URL is the server's base URL.
func (f *Server) URL() string { return f.srv.URL }

// Client returns the real genai client (Gemini API backend) pointed at the
// server.
func (f *Server) Client() *genai.Client {
	f.t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: f.srv.URL},
	})
	if err != nil {
		f.t.Fatalf("genai.NewClient: %v", err)
	}
	return c
}

// Bodies returns every request body received so far, as sent.
func (f *Server) Bodies() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([][]byte, len(f.reqs))
	for i, r := range f.reqs {
		out[i] = r.body
	}
	return out
}

// Requests decodes every request body received so far.
func (f *Server) Requests() []Request {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Request, len(f.reqs))
	for i, r := range f.reqs {
		if err := json.Unmarshal(r.body, &out[i]); err != nil {
			f.t.Fatalf("request %d: %v\n%s", i, err, r.body)
		}
		out[i].Model = r.model
	}
	return out
}

// Left reports how many scripted steps were not consumed.
func (f *Server) Left() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.steps)
}

// Request is the part of a GenerateContentRequest the tests look at,
// decoded from the JSON on the wire (not from SDK types).
type Request struct {
	Model             string    `json:"-"` // from the URL path
	Contents          []Content `json:"contents"`
	SystemInstruction *Content  `json:"systemInstruction"`
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
		Temperature     *float64 `json:"temperature"`
		MaxOutputTokens int      `json:"maxOutputTokens"`
	} `json:"generationConfig"`
}

// Content is one content of a request, as on the wire.
type Content struct {
	Role  string `json:"role"`
	Parts []Part `json:"parts"`
}

// Part is one part of a content, as on the wire.
type Part struct {
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

// Transcript renders contents one line per Content, parts joined by " | ":
//
//	user: text "..."
//	model: call call-1 check_warranty {"serial_number":"SN1"} sig=c2ln...
//	user: response call-1 check_warranty ok | response call-2 x error unknown_function
func Transcript(contents []Content) []string {
	lines := make([]string, len(contents))
	for i, c := range contents {
		parts := make([]string, len(c.Parts))
		for j, p := range c.Parts {
			var s string
			switch {
			case p.FunctionCall != nil:
				s = fmt.Sprintf("call %s %s %s", p.FunctionCall.ID, p.FunctionCall.Name, JSON(p.FunctionCall.Args))
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

// JSON is v marshaled, or "!" and the error.
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("!%v", err)
	}
	return string(b)
}

// Reply builders in the REST shape of GenerateContentResponse.

// Obj is a JSON object from key, value pairs.
func Obj(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// Call is a functionCall part.
func Call(id, name string, args map[string]any) map[string]any {
	return Obj("functionCall", Obj("id", id, "name", name, "args", args))
}

// Text is a text part.
func Text(s string) map[string]any { return Obj("text", s) }

// Cand is a candidate with finishReason finish and, when parts is not nil,
// a model content holding parts.
func Cand(finish string, parts ...map[string]any) map[string]any {
	c := Obj("finishReason", finish)
	if parts != nil {
		c["content"] = Obj("role", "model", "parts", parts)
	}
	return c
}

// Reply is a 200 answer holding cands, with the package's usageMetadata and
// ModelVersion.
func Reply(cands ...map[string]any) Step {
	return Step{Body: JSON(Obj(
		"candidates", cands,
		"usageMetadata", Obj("promptTokenCount", PromptTokens, "candidatesTokenCount", OutputTokens, "totalTokenCount", TotalTokens),
		"modelVersion", ModelVersion,
	))}
}

// Usage is a usageMetadata of a scripted reply, as Gemini sends it.
type Usage struct {
	Prompt, Cached, Output, Thoughts int
}

// ReplyUsage is a 200 answer holding cands with usageMetadata u (its
// cachedContentTokenCount and thoughtsTokenCount sent only when not zero,
// as Gemini does) and ModelVersion.
func ReplyUsage(u Usage, cands ...map[string]any) Step {
	meta := Obj("promptTokenCount", u.Prompt, "candidatesTokenCount", u.Output, "totalTokenCount", u.Prompt+u.Output+u.Thoughts)
	if u.Cached != 0 {
		meta["cachedContentTokenCount"] = u.Cached
	}
	if u.Thoughts != 0 {
		meta["thoughtsTokenCount"] = u.Thoughts
	}
	return Step{Body: JSON(Obj("candidates", cands, "usageMetadata", meta, "modelVersion", ModelVersion))}
}

// One is a Reply with a single STOP candidate holding parts.
func One(parts ...map[string]any) Step { return Reply(Cand("STOP", parts...)) }
