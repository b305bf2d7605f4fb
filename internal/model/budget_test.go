package model

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"triage/internal/agent"
	"triage/internal/store"
	"triage/internal/testkit/geminitest"
	"triage/internal/testkit/pgtest"
)

// clock is a fake time shared by several budgets: Sleep records the wait
// and moves the time on.
type clock struct {
	mu     sync.Mutex
	now    time.Time
	waits  []time.Duration
	onWait func(d time.Duration) // optional: also really wait
}

func newClock() *clock { return &clock{now: time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	if c.onWait != nil {
		c.onWait(d)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

func (c *clock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// openBudget opens a budget of its own store handle on target (each is
// what one triage process on the store has).
func openBudget(t *testing.T, target string, c *clock, cfg BudgetConfig) *Budget {
	t.Helper()
	db, err := store.Open(context.Background(), target, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cfg.DB, cfg.Now, cfg.Sleep = db, c.Now, c.Sleep
	b, err := NewBudget(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Two processes on one store share one budget: what the first takes, the
// second waits for.
func TestSharedRequestsPerMinute(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		c := newClock()
		a := openBudget(t, target, c, BudgetConfig{RequestsPerMinute: 2})
		b := openBudget(t, target, c, BudgetConfig{RequestsPerMinute: 2})
		for range 2 {
			if err := a.Take(ctx, 10); err != nil {
				t.Fatal(err)
			}
		}
		if w := c.Waits(); len(w) != 0 {
			t.Fatalf("the first two calls waited %v", w)
		}
		if err := b.Take(ctx, 10); err != nil {
			t.Fatal(err)
		}
		// Two a minute: one request is back 30 s later.
		if diff := cmp.Diff([]time.Duration{30 * time.Second}, c.Waits()); diff != "" {
			t.Errorf("the other process's waits (-want +got):\n%s", diff)
		}
	})
}

// Tokens: a call that used more than its estimate leaves the budget in
// debt, which the next call, in any process, waits off.
func TestSharedTokensSettleByUsage(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		c := newClock()
		a := openBudget(t, target, c, BudgetConfig{TokensPerMinute: 1000})
		b := openBudget(t, target, c, BudgetConfig{TokensPerMinute: 1000})
		if err := a.Take(ctx, 100); err != nil {
			t.Fatal(err)
		}
		if err := a.Settle(ctx, 100, 1100); err != nil { // the call used 1100
			t.Fatal(err)
		}
		if err := b.Take(ctx, 200); err != nil {
			t.Fatal(err)
		}
		// -100 left; 200 needed: 300 tokens at 1000 a minute is 18 s.
		if diff := cmp.Diff([]time.Duration{18 * time.Second}, c.Waits()); diff != "" {
			t.Errorf("waits (-want +got):\n%s", diff)
		}
		// A call estimated above a minute's worth waits for a full
		// bucket, not for ever.
		c.waits = nil
		if err := b.Take(ctx, 5000); err != nil {
			t.Fatal(err)
		}
		if w := c.Waits(); len(w) != 1 || w[0] > time.Minute {
			t.Errorf("a call above the per-minute tokens waited %v; want one wait of at most a minute", w)
		}
	})
}

// A 429 from the model (Gemini, through the real SDK) makes every process
// on the store back off, for the RetryInfo delay the answer carries.
func TestTooManyRequestsBacksOffEveryProcess(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		c := newClock()
		srv := geminitest.New(t,
			geminitest.Step{Status: 429, Body: `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED",
				"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}`},
			geminitest.One(geminitest.Text("ok")))
		a := &Budgeted{Next: &agent.Gemini{Client: srv.Client()}, Budget: openBudget(t, target, c, BudgetConfig{})}
		b := &Budgeted{Next: &agent.Gemini{Client: srv.Client()}, Budget: openBudget(t, target, c, BudgetConfig{RequestsPerMinute: 100})}
		contents := []*genai.Content{genai.NewContentFromText("Gwarancja?", genai.RoleUser)}
		if _, err := a.GenerateContent(ctx, "gemini-test", contents, &genai.GenerateContentConfig{}); err == nil {
			t.Fatal("the scripted 429 came back as success")
		}
		if w := c.Waits(); len(w) != 0 {
			t.Fatalf("waited before the 429: %v", w)
		}
		resp, err := b.GenerateContent(ctx, "gemini-test", contents, &genai.GenerateContentConfig{})
		if err != nil || resp.Text() != "ok" {
			t.Fatalf("the other process's call: %v, %v", resp, err)
		}
		if diff := cmp.Diff([]time.Duration{7 * time.Second}, c.Waits()); diff != "" {
			t.Errorf("the other process's waits (-want +got):\n%s", diff)
		}
	})
}

// A process without limits takes nothing from the store's budget and
// writes nothing to it, but it still backs off after another's 429.
func TestUnlimitedProcessBacksOffToo(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		c := newClock()
		limited := openBudget(t, target, c, BudgetConfig{RequestsPerMinute: 100})
		free := openBudget(t, target, c, BudgetConfig{})
		for range 3 {
			if err := free.Take(ctx, 1000); err != nil {
				t.Fatal(err)
			}
		}
		if until, err := free.backoffUntil(ctx); err != nil || !until.IsZero() {
			t.Fatalf("before any 429: back-off until %v, %v", until, err)
		}
		if err := limited.BackoffAfter(ctx, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if err := free.Take(ctx, 1000); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]time.Duration{5 * time.Second}, c.Waits()); diff != "" {
			t.Errorf("the unlimited process's waits (-want +got):\n%s", diff)
		}
	})
}

// Without a store the budget binds the process: a 429 without a retry
// hint backs off Config.Backoff, and the request limit holds.
func TestInMemory(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	b, err := NewBudget(ctx, BudgetConfig{RequestsPerMinute: 60, Now: c.Now, Sleep: c.Sleep, Backoff: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.BackoffAfter(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for range 61 {
		if err := b.Take(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	want := []time.Duration{3 * time.Second, time.Second} // the back-off; then the 61st request
	if diff := cmp.Diff(want, c.Waits()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if _, err := NewBudget(ctx, BudgetConfig{RequestsPerMinute: -1}); err == nil {
		t.Error("a negative limit: want an error")
	}
}

// The agent waits for the budget before a turn's timeout starts: a wait
// longer than the turn timeout does not fail the turn.
func TestAgentWaitsOutsideTheTurnTimeout(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	c.onWait = func(d time.Duration) { time.Sleep(300 * time.Millisecond) } // each wait really takes a while
	bud, err := NewBudget(ctx, BudgetConfig{RequestsPerMinute: 1, Now: c.Now, Sleep: c.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	if err := bud.Take(ctx, 1); err != nil { // another email took the minute's request
		t.Fatal(err)
	}
	srv := geminitest.New(t, geminitest.One(geminitest.Text("Dziękujemy.")))
	ag, err := agent.New(agent.Config{Model: &Budgeted{Next: &agent.Gemini{Client: srv.Client()}, Budget: bud}, TurnTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	o, err := ag.Open(ctx, agent.Request{Prompt: "Gwarancja?"})
	if err != nil || o.Content == nil || len(o.Content.Parts) != 1 || o.Content.Parts[0].Text != "Dziękujemy." {
		t.Fatalf("Open = %+v, %v; want the answer after the wait", o.Content, err)
	}
	if w := c.Waits(); len(w) != 1 || w[0] != time.Minute {
		t.Errorf("waits %v; want one minute", w)
	}
}

// Concurrent calls from two processes take exactly the budget: the update
// is atomic, none is lost.
func TestConcurrentTakesAreExact(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		c := newClock()
		bs := []*Budget{openBudget(t, target, c, BudgetConfig{RequestsPerMinute: 10}), openBudget(t, target, c, BudgetConfig{RequestsPerMinute: 10})}
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() {
				if err := bs[i%2].Take(ctx, 1); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if w := c.Waits(); len(w) != 0 {
			t.Fatalf("10 calls within a budget of 10 waited %v", w)
		}
		if err := bs[0].Take(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]time.Duration{6 * time.Second}, c.Waits()); diff != "" {
			t.Errorf("the 11th call's waits (-want +got):\n%s", diff)
		}
	})
}

// The estimate counts the function declarations sent with every call, to
// within a quarter of their JSON, whether given as JSON values or as a
// genai.Schema.
func TestEstimateCountsDeclarations(t *testing.T) {
	contents := []*genai.Content{genai.NewContentFromText("Mój ekspres nie grzeje.", genai.RoleUser)}
	params := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"serial_number": map[string]any{"type": "string", "description": "the serial number exactly as the customer wrote it", "pattern": "^[A-Z0-9-]{4,40}$"},
			"priority":      map[string]any{"type": "string", "enum": []any{"low", "normal", "high"}},
			"count":         map[string]any{"type": "integer", "minimum": 1},
		},
		"required": []any{"serial_number"},
	}
	schema := &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{
		"serial_number": {Type: genai.TypeString, Description: "the serial number exactly as the customer wrote it"},
	}}
	base := estimateTokens(contents, &genai.GenerateContentConfig{})
	for name, decl := range map[string]*genai.FunctionDeclaration{
		"json values": {Name: "create_ticket", Description: "Open a repair ticket for a device under warranty.", ParametersJsonSchema: params},
		"schema":      {Name: "create_ticket", Description: "Open a repair ticket for a device under warranty.", Parameters: schema},
	} {
		cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{decl}}}}
		b, err := json.Marshal(decl)
		if err != nil {
			t.Fatal(err)
		}
		got, want := float64(estimateTokens(contents, cfg)-base), float64(len(b))/4
		if got < 0.75*want || got > 1.25*want {
			t.Errorf("%s: the declaration adds %.0f tokens to the estimate; its JSON is %d bytes (%.0f tokens)", name, got, len(b), want)
		}
	}
}

// answerOnly is a model that answers every call with no usage reported,
// so nothing settles the estimate a call was taken at.
type answerOnly struct{}

func (answerOnly) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return &genai.GenerateContentResponse{}, nil
}

// A call is taken at the estimate Wait made of it (the context Wait
// returns carries it), not counted again; a call Wait did not see (another
// config) is counted afresh.
func TestCallIsTakenAtTheEstimateOfWait(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		sameCall bool
		wantWait bool
	}{{"the call Wait saw", true, false}, {"another call", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			b, err := NewBudget(ctx, BudgetConfig{TokensPerMinute: 1000, Now: c.Now, Sleep: c.Sleep})
			if err != nil {
				t.Fatal(err)
			}
			m := &Budgeted{Next: answerOnly{}, Budget: b}
			small := []*genai.Content{genai.NewContentFromText(string(make([]byte, 400)), genai.RoleUser)} // 101 tokens
			config := &genai.GenerateContentConfig{}
			cctx, err := m.Wait(ctx, small, config)
			if err != nil {
				t.Fatal(err)
			}
			// What the call is then made with counts 1001 tokens: were it
			// counted again, it would take the whole minute's tokens.
			large := []*genai.Content{genai.NewContentFromText(string(make([]byte, 4000)), genai.RoleUser)}
			if !tc.sameCall {
				config = &genai.GenerateContentConfig{}
			}
			if _, err := m.GenerateContent(cctx, DefaultModel, large, config); err != nil {
				t.Fatal(err)
			}
			if err := b.Take(ctx, 899); err != nil { // what is left after 101
				t.Fatal(err)
			}
			if waited := len(c.Waits()) > 0; waited != tc.wantWait {
				t.Errorf("waits %v; want a wait: %v", c.Waits(), tc.wantWait)
			}
		})
	}
}
