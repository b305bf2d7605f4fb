package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"triage/internal/agent"
	"triage/internal/testkit/geminitest"
)

// clock is a settable time for the cache and the server.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// sendTurn is a model turn that sends the reply (the final function).
func sendTurn() geminitest.Step {
	return geminitest.ReplyUsage(geminitest.Usage{Prompt: 1500, Cached: 1200, Output: 40},
		geminitest.Cand("STOP", geminitest.Call("c1", "send_email", geminitest.Obj("to", customer, "subject", "Re", "body", "ok"))))
}

// cachedModel is the loop's Gemini with a context cache over f, on clk,
// logging to logs.
func cachedModel(f *geminitest.Server, clk *clock, logs *bytes.Buffer, minTokens int) *agent.Gemini {
	c := f.Client()
	return &agent.Gemini{Client: c, Cache: &agent.ContextCache{Client: c, TTL: time.Hour, MinTokens: minTokens, Now: clk.now,
		Logger: slog.New(slog.NewTextHandler(logs, nil))}}
}

// TestContextCacheServesThePrefix: the loop's calls of two emails name one
// cache, created once with the system instruction and the declarations
// alone, and carry neither; the tokens Gemini served from it are counted.
func TestContextCacheServesThePrefix(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	f := geminitest.New(t, sendTurn(), sendTurn())
	f.SetNow(clk.now)
	var logs bytes.Buffer
	a := newAgent(t, cachedModel(f, clk, &logs, 1), &sleeps{}, nil)
	for i, text := range []string{prompt, "Second customer: my kettle SN2 leaks."} {
		req := request()
		req.Prompt = text
		got, err := a.Run(context.Background(), req, &fakeTools{})
		if err != nil || !got.FinalCalled {
			t.Fatalf("email %d: %+v, %v", i, got, err)
		}
		if got.Usage.Cached != 1200 {
			t.Errorf("email %d: cached tokens %d, want 1200", i, got.Usage.Cached)
		}
	}
	creates := 0
	for _, r := range f.CacheRequests() {
		if r.Method != http.MethodPost {
			continue
		}
		creates++
		var body struct {
			Model             string `json:"model"`
			TTL               string `json:"ttl"`
			SystemInstruction *geminitest.Content
			Tools             []struct {
				FunctionDeclarations []struct {
					Name string `json:"name"`
				} `json:"functionDeclarations"`
			} `json:"tools"`
			Contents []any `json:"contents"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if body.Model != "models/gemini-test" || body.TTL != "3600s" || body.SystemInstruction == nil ||
			body.SystemInstruction.Parts[0].Text != system || len(body.Tools) != 1 || len(body.Tools[0].FunctionDeclarations) != len(functions) || body.Contents != nil {
			t.Errorf("cache create %s", r.Body)
		}
		for _, customerText := range []string{prompt, "kettle", customer} {
			if strings.Contains(string(r.Body), customerText) {
				t.Errorf("the cache holds the customer's %q: %s", customerText, r.Body)
			}
		}
	}
	if creates != 1 {
		t.Errorf("%d caches created, want 1", creates)
	}
	for i, r := range f.Requests() {
		if r.CachedContent != "cachedContents/c1" || r.SystemInstruction != nil || r.Tools != nil || r.ToolConfig != nil {
			t.Errorf("request %d: cachedContent %q, system instruction %v, tools %v; want the cache alone", i, r.CachedContent, r.SystemInstruction, r.Tools)
		}
	}
}

// TestContextCacheRefreshedBeforeItExpires: a cache with less than a
// quarter of its TTL left is extended (PATCH ttl); one that expired on
// the client's clock is created again.
func TestContextCacheRefreshedBeforeItExpires(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	f := geminitest.New(t, sendTurn(), sendTurn(), sendTurn())
	f.SetNow(clk.now)
	var logs bytes.Buffer
	a := newAgent(t, cachedModel(f, clk, &logs, 1), &sleeps{}, nil)
	run := func() {
		t.Helper()
		if got, err := a.Run(context.Background(), request(), &fakeTools{}); err != nil || !got.FinalCalled {
			t.Fatalf("%+v, %v", got, err)
		}
	}
	run()
	clk.add(50 * time.Minute) // 10 minutes left: extended
	run()
	clk.add(2 * time.Hour) // expired: created again
	run()
	var methods []string
	for _, r := range f.CacheRequests() {
		methods = append(methods, r.Method+" "+r.Path)
	}
	want := "POST /v1beta/cachedContents|PATCH /v1beta/cachedContents/c1|POST /v1beta/cachedContents"
	if got := strings.Join(methods, "|"); got != want {
		t.Errorf("cache requests %s, want %s", got, want)
	}
	reqs := f.Requests()
	if reqs[1].CachedContent != "cachedContents/c1" || reqs[2].CachedContent != "cachedContents/c2" {
		t.Errorf("requests name %q and %q", reqs[1].CachedContent, reqs[2].CachedContent)
	}
}

// TestContextCacheFallsBack: a cache Gemini will not create leaves the
// calls uncached, with the prefix, and says so in the log, and is not
// asked for again within a minute; a cache Gemini refuses at the call
// (deleted behind triage's back) is forgotten and the call sent again
// uncached.
func TestContextCacheFallsBack(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	f := geminitest.New(t, sendTurn(), sendTurn(), sendTurn(), sendTurn())
	f.SetNow(clk.now)
	var logs bytes.Buffer
	a := newAgent(t, cachedModel(f, clk, &logs, 1), &sleeps{}, nil)
	run := func() {
		t.Helper()
		if got, err := a.Run(context.Background(), request(), &fakeTools{}); err != nil || !got.FinalCalled {
			t.Fatalf("%+v, %v", got, err)
		}
	}
	f.FailCache(http.StatusTooManyRequests)
	run()
	run() // within the minute: no attempt
	if n := len(f.CacheRequests()); n != 1 {
		t.Errorf("%d cache requests, want the one refused", n)
	}
	if !strings.Contains(logs.String(), "context cache not created") {
		t.Errorf("log %q: want the refusal said", logs.String())
	}
	for i, r := range f.Requests()[:2] {
		if r.CachedContent != "" || r.SystemInstruction == nil || len(r.Tools) != 1 {
			t.Errorf("request %d after a refused cache: cachedContent %q, system %v, tools %d", i, r.CachedContent, r.SystemInstruction, len(r.Tools))
		}
	}
	clk.add(2 * time.Minute)
	run()                                                              // creates c1 and uses it
	f.SetNow(func() time.Time { return clk.now().Add(2 * time.Hour) }) // Gemini dropped it
	run()
	reqs := f.Requests()
	if len(reqs) != 4 || reqs[2].CachedContent != "cachedContents/c1" || reqs[3].CachedContent != "" || reqs[3].SystemInstruction == nil {
		t.Errorf("after a refused cache: %d requests; the last names %q", len(reqs), reqs[len(reqs)-1].CachedContent)
	}
	if !strings.Contains(logs.String(), "context cache refused") {
		t.Errorf("log %q: want the refused cache said", logs.String())
	}
}

// TestContextCacheSmallPrefix: a prefix below the minimum is never sent
// to a cache.
func TestContextCacheSmallPrefix(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	f := geminitest.New(t, sendTurn())
	var logs bytes.Buffer
	a := newAgent(t, cachedModel(f, clk, &logs, agent.DefaultCacheMinTokens), &sleeps{}, nil)
	if got, err := a.Run(context.Background(), request(), &fakeTools{}); err != nil || !got.FinalCalled {
		t.Fatalf("%+v, %v", got, err)
	}
	if n := len(f.CacheRequests()); n != 0 {
		t.Errorf("%d cache requests for a prefix of a few tokens", n)
	}
	if r := f.Requests()[0]; r.CachedContent != "" || r.SystemInstruction == nil {
		t.Errorf("request names cache %q", r.CachedContent)
	}
}
