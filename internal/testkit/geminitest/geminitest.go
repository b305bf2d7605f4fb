// Package geminitest runs a scripted Gemini server for tests: an httptest
// server on loopback that answers POST /v1beta/models/{model}:generateContent
// in the real REST format from a queue of steps, and serves the context
// caches of /v1beta/cachedContents (create, get, update, delete) as Gemini
// does, and countTokens (CountWords), so tests drive the real genai
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
	"time"

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
	// caches
	caches    map[string]*Cache // by name, cachedContents/N
	cacheReqs []CacheRequest
	cacheFail []int // statuses the next cache requests answer with
	now       func() time.Time
	counts    int // countTokens requests
}

// Cache is a context cache the server holds, as created.
type Cache struct {
	Name       string
	Model      string
	ExpireTime time.Time
	// Body is the create request's body, as sent.
	Body []byte
}

// CacheRequest is one request to the cachedContents endpoints.
type CacheRequest struct {
	Method, Path string
	Body         []byte
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
	if strings.HasPrefix(r.URL.Path, "/v1beta/cachedContents") {
		f.serveCache(w, r)
		return
	}
	if countPath.MatchString(r.URL.Path) && r.Method == http.MethodPost {
		f.serveCount(w, r)
		return
	}
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

	if msg, code := f.checkCached(body); code != 0 {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(code)
		fmt.Fprint(w, JSON(Obj("error", Obj("code", code, "message", msg, "status", map[int]string{400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}[code]))))
		return
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

// FailCache makes the next cache requests (create, get, update, delete)
// answer with these HTTP statuses, one each, in Gemini's error format.
func (f *Server) FailCache(statuses ...int) {
	f.mu.Lock()
	f.cacheFail = append(f.cacheFail, statuses...)
	f.mu.Unlock()
}

// SetNow sets the clock the server computes a cache's expireTime by
// (default time.Now).
func (f *Server) SetNow(now func() time.Time) {
	f.mu.Lock()
	f.now = now
	f.mu.Unlock()
}

// Caches returns the caches the server holds.
func (f *Server) Caches() []Cache {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Cache, 0, len(f.caches))
	for _, c := range f.caches {
		out = append(out, *c)
	}
	return out
}

// CacheRequests returns every request to the cachedContents endpoints.
func (f *Server) CacheRequests() []CacheRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]CacheRequest(nil), f.cacheReqs...)
}

var countPath = regexp.MustCompile(`^/v1beta/models/[^/:]+:countTokens$`)

// CountWords is how many tokens the countTokens endpoint answers for a
// request: the words of its contents' texts (a stand-in for Gemini's
// tokenizer, deterministic for tests).
func CountWords(texts ...string) int {
	n := 0
	for _, t := range texts {
		n += len(strings.Fields(t))
	}
	return n
}

// serveCount answers POST /v1beta/models/{model}:countTokens
// ({"contents": [...]}) with {"totalTokens": CountWords of its texts}, and
// counts the request.
func (f *Server) serveCount(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Contents []Content `json:"contents"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, JSON(Obj("error", Obj("code", 400, "message", err.Error(), "status", "INVALID_ARGUMENT"))))
		return
	}
	var texts []string
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			texts = append(texts, p.Text)
		}
	}
	f.mu.Lock()
	f.counts++
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	fmt.Fprint(w, JSON(Obj("totalTokens", CountWords(texts...))))
}

// Counts is how many countTokens requests the server answered.
func (f *Server) Counts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts
}

var cachePath = regexp.MustCompile(`^/v1beta/(cachedContents/[^/:]+)$`)

// serveCache answers the cachedContents endpoints in the REST format:
// POST /v1beta/cachedContents creates (model, ttl, systemInstruction,
// tools, toolConfig, contents), GET, PATCH (ttl) and DELETE
// /v1beta/cachedContents/{id} read, extend and delete one.
func (f *Server) serveCache(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cacheReqs = append(f.cacheReqs, CacheRequest{Method: r.Method, Path: r.URL.Path, Body: body})
	fail := func(code int, status, msg string) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(code)
		fmt.Fprint(w, JSON(Obj("error", Obj("code", code, "message", msg, "status", status))))
	}
	if len(f.cacheFail) > 0 {
		code := f.cacheFail[0]
		f.cacheFail = f.cacheFail[1:]
		fail(code, http.StatusText(code), "scripted failure")
		return
	}
	now := time.Now
	if f.now != nil {
		now = f.now
	}
	answer := func(c *Cache) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		fmt.Fprint(w, JSON(Obj("name", c.Name, "model", c.Model, "displayName", "", "createTime", now().UTC().Format(time.RFC3339Nano),
			"updateTime", now().UTC().Format(time.RFC3339Nano), "expireTime", c.ExpireTime.UTC().Format(time.RFC3339Nano),
			"usageMetadata", Obj("totalTokenCount", len(c.Body)/4))))
	}
	var req struct {
		Model string `json:"model"`
		TTL   string `json:"ttl"`
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			fail(http.StatusBadRequest, "INVALID_ARGUMENT", "bad JSON: "+err.Error())
			return
		}
	}
	ttl := time.Hour
	if req.TTL != "" {
		d, err := time.ParseDuration(req.TTL)
		if err != nil || d <= 0 {
			fail(http.StatusBadRequest, "INVALID_ARGUMENT", "bad ttl "+req.TTL)
			return
		}
		ttl = d
	}
	if r.URL.Path == "/v1beta/cachedContents" && r.Method == http.MethodPost {
		if !strings.HasPrefix(req.Model, "models/") {
			fail(http.StatusBadRequest, "INVALID_ARGUMENT", "model must be models/{model}, got "+req.Model)
			return
		}
		if f.caches == nil {
			f.caches = map[string]*Cache{}
		}
		c := &Cache{Name: fmt.Sprintf("cachedContents/c%d", len(f.caches)+1), Model: req.Model, ExpireTime: now().Add(ttl), Body: body}
		f.caches[c.Name] = c
		answer(c)
		return
	}
	m := cachePath.FindStringSubmatch(r.URL.Path)
	var c *Cache
	if m != nil {
		c = f.caches[m[1]]
	}
	if c == nil || !now().Before(c.ExpireTime) {
		fail(http.StatusNotFound, "NOT_FOUND", "CachedContent not found (or permission denied)")
		return
	}
	switch r.Method {
	case http.MethodGet:
		answer(c)
	case http.MethodPatch:
		c.ExpireTime = now().Add(ttl)
		answer(c)
	case http.MethodDelete:
		delete(f.caches, c.Name)
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		fmt.Fprint(w, "{}")
	default:
		fail(http.StatusMethodNotAllowed, "INVALID_ARGUMENT", r.Method+" not served")
	}
}

// checkCached refuses a request naming a cachedContent as Gemini does: one
// that also sets a system instruction, tools or a tool config (400), one
// whose cache does not exist or expired (404). It returns the message and
// status, or 0.
func (f *Server) checkCached(body []byte) (string, int) {
	var req struct {
		CachedContent     string          `json:"cachedContent"`
		SystemInstruction json.RawMessage `json:"systemInstruction"`
		Tools             json.RawMessage `json:"tools"`
		ToolConfig        json.RawMessage `json:"toolConfig"`
	}
	if json.Unmarshal(body, &req) != nil || req.CachedContent == "" {
		return "", 0
	}
	if req.SystemInstruction != nil || req.Tools != nil || req.ToolConfig != nil {
		return "CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config.", http.StatusBadRequest
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now
	if f.now != nil {
		now = f.now
	}
	if c := f.caches[req.CachedContent]; c == nil || !now().Before(c.ExpireTime) {
		return "CachedContent not found (or permission denied)", http.StatusNotFound
	}
	return "", 0
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
	CachedContent     string    `json:"cachedContent"`
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
