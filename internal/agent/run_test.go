package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage/internal/agent"
	"triage/internal/testkit/geminitest"
)

// times is the usage of n geminitest.Reply() responses.
func times(n int) agent.Usage {
	return agent.Usage{Prompt: n * usage.Prompt, Output: n * usage.Output, Total: n * usage.Total}
}

// checkBackoff asserts n sleeps, the i-th within [base*2^i, base*2^i*1.1]
// (capped exponential with at most 10% jitter), so each is longer than the
// one before.
func checkBackoff(t *testing.T, got []time.Duration, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("backoff sleeps = %v, want %d", got, n)
	}
	for i, d := range got {
		lo := retryBase << i
		if d < lo || d > lo+lo/10 {
			t.Errorf("sleep %d = %v, want in [%v, %v]", i, d, lo, lo+lo/10)
		}
	}
}

// TestRunRetryDelayHint checks that a 429's RetryInfo.retryDelay longer than
// the backoff is honoured, and capped at RetryMax.
func TestRunRetryDelayHint(t *testing.T) {
	quota := func(delay string) geminitest.Step {
		return geminitest.Step{Status: 429, Body: `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED",` +
			`"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"` + delay + `"}]}}`}
	}
	srv := geminitest.New(t, quota("0.7s"), quota("37s"), geminitest.One(geminitest.Text("Valid.")))
	sl := &sleeps{}
	a := newAgent(t, gemini(srv), sl, nil) // RetryMax 1s
	got, err := a.Run(context.Background(), textRequest(), &fakeTools{})
	if err != nil || got.Stop != nil || got.ModelCalls != 3 {
		t.Fatalf("Run = %+v, %v; want a normal end after 3 calls", got, err)
	}
	if diff := cmp.Diff([]time.Duration{700 * time.Millisecond, time.Second}, sl.got()); diff != "" {
		t.Errorf("sleeps (-want +got):\n%s", diff)
	}
}

func TestRunCanceledByCaller(t *testing.T) {
	checkSN1 := geminitest.Call("c1", "check_warranty", map[string]any{"serial_number": "SN1"})
	srv := geminitest.New(t, geminitest.One(checkSN1))
	a := newAgent(t, gemini(srv), &sleeps{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tools := &fakeTools{onCall: func(string) { cancel() }}

	got, err := a.Run(ctx, request(), tools)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !errors.Is(got.Stop, context.Canceled) || !got.Degraded {
		t.Errorf("Stop = %v, Degraded = %v; want context.Canceled, degraded", got.Stop, got.Degraded)
	}
	if got.ModelCalls != 1 {
		t.Errorf("ModelCalls = %d, want 1 (no call after cancellation)", got.ModelCalls)
	}
}

func TestRunCanceledBeforeStart(t *testing.T) {
	srv := geminitest.New(t)
	a := newAgent(t, gemini(srv), &sleeps{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := a.Run(ctx, request(), &fakeTools{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !errors.Is(got.Stop, context.Canceled) || got.ModelCalls != 0 {
		t.Errorf("Stop = %v, ModelCalls = %d; want context.Canceled, 0", got.Stop, got.ModelCalls)
	}
}

// TestRunHistoryWire checks the model turn gets role "model" when the
// server left it out, and the function response carries the whole envelope.
func TestRunHistoryWire(t *testing.T) {
	noRole := geminitest.Step{Body: `{"candidates":[{"content":{"parts":[{"functionCall":{"id":"c1","name":"check_warranty","args":{"serial_number":"SN1"}}}]},"finishReason":"STOP"}]}`}
	srv := geminitest.New(t, noRole, geminitest.One(geminitest.Text("Valid.")))
	a := newAgent(t, gemini(srv), &sleeps{}, nil)
	if _, err := a.Run(context.Background(), textRequest(), &fakeTools{}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	want := []string{
		`user: text "My device SN1 stopped working."`,
		`model: call c1 check_warranty {"serial_number":"SN1"}`,
		`user: response c1 check_warranty ok`,
	}
	if diff := cmp.Diff(want, geminitest.Transcript(reqs[1].Contents)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The envelope from Tools goes on the wire whole, as functionResponse.response.
	wantEnv := map[string]any{"ok": true, "result": map[string]any{"serial_number": "SN1", "status": "valid"}}
	if diff := cmp.Diff(wantEnv, reqs[1].Contents[2].Parts[0].FunctionResponse.Response); diff != "" {
		t.Errorf("functionResponse.response (-want +got):\n%s", diff)
	}
}

// TestRunConcurrent runs loops in parallel on one Agent (go test -race
// checks that no config or history is shared).
func TestRunConcurrent(t *testing.T) {
	const n = 4
	var steps []geminitest.Step
	for range n {
		steps = append(steps, geminitest.One(geminitest.Text("Valid.")))
	}
	srv := geminitest.New(t, steps...)
	a := newAgent(t, gemini(srv), &sleeps{}, nil)
	req := textRequest()
	var wg sync.WaitGroup
	results := make([]agent.Result, n)
	for i := range n {
		wg.Go(func() {
			r, err := a.Run(context.Background(), req, &fakeTools{})
			if err != nil {
				t.Error(err)
			}
			results[i] = r
		})
	}
	wg.Wait()
	for i, r := range results {
		if r.Text != "Valid." || r.Stop != nil {
			t.Errorf("loop %d: %+v", i, r)
		}
	}
	checkWire(t, srv.Requests()[:1])
}

func TestRunNilTools(t *testing.T) {
	a := newAgent(t, gemini(geminitest.New(t)), &sleeps{}, nil)
	if _, err := a.Run(context.Background(), request(), nil); err == nil {
		t.Error("Run with nil Tools: no error")
	}
}

// TestOpenRetries: the opening turn is one model call under the loop's
// retry policy and turn timeout: a 503 is retried after a backoff, a 400
// is not, a hung call ends at the turn timeout; the calls count every
// attempt.
func TestOpenRetries(t *testing.T) {
	choose := geminitest.One(geminitest.Call("o1", "choose", map[string]any{"x": "a"}))
	tests := []struct {
		name       string
		steps      func(t *testing.T) []geminitest.Step
		tweak      func(*agent.Config)
		wantCalls  int
		wantErr    error
		wantSleeps int
	}{
		{
			name:      "one call",
			steps:     func(*testing.T) []geminitest.Step { return []geminitest.Step{choose} },
			wantCalls: 1,
		},
		{
			name: "503 then success",
			steps: func(t *testing.T) []geminitest.Step {
				return []geminitest.Step{fixtureStep(t, 503, "error_503.json"), choose}
			},
			wantCalls:  2,
			wantSleeps: 1,
		},
		{
			name:      "permanent 400",
			steps:     func(t *testing.T) []geminitest.Step { return []geminitest.Step{fixtureStep(t, 400, "error_400.json")} },
			wantCalls: 1,
			wantErr:   agent.ErrModel,
		},
		{
			name:      "turn timeout",
			tweak:     func(c *agent.Config) { c.TurnTimeout = 100 * time.Millisecond },
			steps:     func(*testing.T) []geminitest.Step { return []geminitest.Step{{Hang: true}} },
			wantCalls: 1,
			wantErr:   agent.ErrTurnTimeout,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := geminitest.New(t, tt.steps(t)...)
			sl := &sleeps{}
			a := newAgent(t, gemini(srv), sl, tt.tweak)
			o, err := a.Open(context.Background(), request())
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if o.ModelCalls != tt.wantCalls || len(srv.Requests()) != tt.wantCalls {
				t.Errorf("calls = %d, server saw %d, want %d", o.ModelCalls, len(srv.Requests()), tt.wantCalls)
			}
			if err == nil {
				if calls := o.Calls(); len(calls) != 1 || calls[0].Name != "choose" {
					t.Errorf("opened calls %+v, want choose", calls)
				}
			}
			checkBackoff(t, sl.got(), tt.wantSleeps)
		})
	}
}

// TestOpenCanceledByCaller: an opening turn whose caller's context ends
// returns at once with the cancellation, not a model error.
func TestOpenCanceledByCaller(t *testing.T) {
	srv := geminitest.New(t, geminitest.Step{Hang: true})
	a := newAgent(t, gemini(srv), &sleeps{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(srv.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	o, err := a.Open(ctx, request())
	if !errors.Is(err, context.Canceled) || o.ModelCalls != 1 {
		t.Errorf("Open: %v, %d model calls; want context.Canceled after 1", err, o.ModelCalls)
	}
}

func TestNew(t *testing.T) {
	if _, err := agent.New(agent.Config{}); err == nil || !strings.HasPrefix(err.Error(), "agent:") {
		t.Errorf("New without Model: err = %v", err)
	}
	if _, err := agent.New(agent.Config{Model: &agent.Gemini{}, MaxTurns: -1}); err == nil {
		t.Error("New with MaxTurns -1: no error")
	}
}

// BenchmarkRun measures one two-turn loop (a function call, then the final
// function) over loopback HTTP through the real genai client.
func BenchmarkRun(b *testing.B) {
	checkSN1 := geminitest.Call("c1", "check_warranty", map[string]any{"serial_number": "SN1"})
	send := geminitest.Call("s1", "send_email", map[string]any{"to": customer, "subject": "Re: SN1", "body": "Covered."})
	steps := make([]geminitest.Step, 0, 2*b.N)
	for range b.N {
		steps = append(steps, geminitest.One(checkSN1), geminitest.One(send))
	}
	srv := geminitest.New(b, steps...)
	a := newAgent(b, gemini(srv), &sleeps{}, nil)
	req := request()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r, err := a.Run(context.Background(), req, &fakeTools{})
		if err != nil || !r.FinalCalled {
			b.Fatalf("Run = %+v, %v", r, err)
		}
	}
}

// TestRunNudgeNamesFunctions: the nudge after a text-only turn names the
// final function and the declared functions not yet called.
func TestRunNudgeNamesFunctions(t *testing.T) {
	srv := geminitest.New(t,
		geminitest.One(geminitest.Call("c1", "check_warranty", map[string]any{"serial_number": "SN1"})),
		geminitest.One(geminitest.Text("I will check the warranty now.")),
		geminitest.One(geminitest.Call("s1", "send_email", map[string]any{"to": customer, "subject": "Re: SN1", "body": "Covered."})))
	a := newAgent(t, gemini(srv), &sleeps{}, nil)
	if _, err := a.Run(context.Background(), request(), &fakeTools{}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Contents
	got := last[len(last)-1].Parts[0].Text
	for _, want := range []string{"send_email", "create_ticket"} {
		if !strings.Contains(got, want) {
			t.Errorf("nudge does not name %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "check_warranty") {
		t.Errorf("nudge names check_warranty, already called:\n%s", got)
	}
}

// TestRunUsageCachedAndThoughts: the usage of a run sums what Gemini
// reports per call, the tokens served from its context cache and the
// thinking tokens included.
func TestRunUsageCachedAndThoughts(t *testing.T) {
	f := geminitest.New(t,
		geminitest.ReplyUsage(geminitest.Usage{Prompt: 1500, Cached: 1024, Output: 30, Thoughts: 12},
			geminitest.Cand("STOP", geminitest.Call("c1", "check_warranty", geminitest.Obj("serial_number", "SN1")))),
		geminitest.ReplyUsage(geminitest.Usage{Prompt: 1700, Cached: 1024, Output: 80},
			geminitest.Cand("STOP", geminitest.Call("c2", "send_email", geminitest.Obj("to", customer, "subject", "Re", "body", "ok")))),
	)
	a := newAgent(t, gemini(f), &sleeps{}, nil)
	got, err := a.Run(context.Background(), request(), &fakeTools{})
	if err != nil {
		t.Fatal(err)
	}
	want := agent.Usage{Prompt: 3200, Cached: 2048, Output: 110, Thoughts: 12, Total: 1500 + 30 + 12 + 1700 + 80}
	if diff := cmp.Diff(want, got.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}
