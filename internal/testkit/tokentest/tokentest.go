// Package tokentest measures what the model is sent, for the token
// benchmarks: a Recorder (an http.RoundTripper) keeps every Gemini
// generateContent request a run makes, as on the wire, and Measure splits
// each into its parts (the shared system instruction, the scenario's
// instructions, the tool declarations, the email, the conversation so far,
// the tool results), groups the requests by email and scenario, and counts
// the tokens of each part with a Counter: an estimate offline, the model's
// own countTokens endpoint when live.
package tokentest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"google.golang.org/genai"

	"triage/internal/instructions"
	"triage/internal/model"
	"triage/internal/prompt"
)

// Recorder passes every request to Next (default http.DefaultTransport)
// and keeps the body of each generateContent request, in order, and the
// output tokens its answer reported (candidates and thoughts).
type Recorder struct {
	Next http.RoundTripper
	mu   sync.Mutex
	reqs [][]byte
	outs []int
}

var generate = regexp.MustCompile(`/models/[^/:]+:generateContent$`)

// RoundTrip implements http.RoundTripper.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && generate.MatchString(req.URL.Path) {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.ContentLength = int64(len(b))
		resp, err := r.next().RoundTrip(req)
		out := 0
		if err == nil {
			rb, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if rerr != nil {
				return nil, rerr
			}
			resp.Body = io.NopCloser(bytes.NewReader(rb))
			var u struct {
				UsageMetadata struct {
					Candidates int `json:"candidatesTokenCount"`
					Thoughts   int `json:"thoughtsTokenCount"`
				} `json:"usageMetadata"`
			}
			if json.Unmarshal(rb, &u) == nil {
				out = u.UsageMetadata.Candidates + u.UsageMetadata.Thoughts
			}
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, b)
		r.outs = append(r.outs, out)
		r.mu.Unlock()
		return resp, err
	}
	return r.next().RoundTrip(req)
}

func (r *Recorder) next() http.RoundTripper {
	if r.Next == nil {
		return http.DefaultTransport
	}
	return r.Next
}

// Outputs returns the output tokens of the recorded requests' answers, in
// their order, and forgets them.
func (r *Recorder) Outputs() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.outs
	r.outs = nil
	return out
}

// Bodies returns the recorded request bodies and forgets them.
func (r *Recorder) Bodies() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

// Counter counts the tokens of a text.
type Counter interface {
	Count(ctx context.Context, text string) (int, error)
	// Name says how it counts, for the benchmark's report.
	Name() string
}

// Estimate is the offline count, the built-in offline model's: a token is
// about four characters (ceil(runes / 4)). It is an estimate, not a
// tokenizer: Gemini's SentencePiece tokenizer gives about 3.5 to 4.5
// characters a token on English and Polish prose, fewer on JSON.
type Estimate struct{}

// Count implements Counter.
func (Estimate) Count(_ context.Context, text string) (int, error) {
	return (utf8.RuneCountInString(text) + 3) / 4, nil
}

// Name implements Counter.
func (Estimate) Name() string { return "estimate (runes/4)" }

// Live counts with the model's countTokens endpoint (genai's
// Models.CountTokens), each distinct text once. The Gemini API counts
// contents only, so the system instruction and the tool declarations are
// counted as the text of their JSON.
type Live struct {
	Client *genai.Client
	Model  string
	mu     sync.Mutex
	seen   map[string]int
}

// Count implements Counter.
func (l *Live) Count(ctx context.Context, text string) (int, error) {
	if text == "" {
		return 0, nil
	}
	l.mu.Lock()
	n, ok := l.seen[text]
	l.mu.Unlock()
	if ok {
		return n, nil
	}
	resp, err := l.Client.Models.CountTokens(ctx, l.Model, []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}, nil)
	if err != nil {
		return 0, fmt.Errorf("countTokens: %w", err)
	}
	l.mu.Lock()
	if l.seen == nil {
		l.seen = map[string]int{}
	}
	l.seen[text] = int(resp.TotalTokens)
	l.mu.Unlock()
	return int(resp.TotalTokens), nil
}

// Name implements Counter.
func (l *Live) Name() string { return "countTokens of " + l.Model }

// Gemini 2.5 Flash's list prices per 1M tokens (USD), as the benchmark's
// cost figures use them: input, cached input, output (thinking included).
const (
	FlashInput       = 0.30
	FlashCachedInput = 0.03
	FlashOutput      = 2.50
)

// ImageTokens is what an inline attachment counts: Gemini's figure for an
// image of at most 384 pixels a side (a larger one is tiled, 258 a tile).
const ImageTokens = 258

// Parts are the tokens of one request by part.
type Parts struct {
	// System is the instructions every scenario shares (main.md);
	// Scenario the scenario's own; Tools the function declarations and
	// the tool configuration. They are the stable prefix: the same for
	// every email of a scenario.
	System, Scenario, Tools int
	// Email is the first user turn (facts, the customer's text,
	// attachments) but its look-ups block; History the model's turns and
	// the loop's notes; Results the function responses and the look-ups
	// the shop ran before the first turn.
	Email, History, Results int
}

// splitLookups cuts the look-ups block (prompt.LookupsHeader and its line)
// out of a first user turn: the rest, and the block ("" when none).
func splitLookups(text string) (rest, block string) {
	i := strings.Index(text, prompt.LookupsHeader)
	if i < 0 {
		return text, ""
	}
	end := len(text)
	if nl := strings.Index(text[i+len(prompt.LookupsHeader)+1:], "\n"); nl >= 0 {
		end = i + len(prompt.LookupsHeader) + 1 + nl + 1
	}
	return text[:i] + text[end:], text[i:end]
}

// Prompt is the sum of the parts.
func (p Parts) Prompt() int {
	return p.System + p.Scenario + p.Tools + p.Email + p.History + p.Results
}

// Prefix is the stable prefix: what a cache could serve.
func (p Parts) Prefix() int { return p.System + p.Scenario + p.Tools }

func (p *Parts) add(o Parts) {
	p.System += o.System
	p.Scenario += o.Scenario
	p.Tools += o.Tools
	p.Email += o.Email
	p.History += o.History
	p.Results += o.Results
}

// Scenario is what the emails of one scenario were sent.
type Scenario struct {
	Name   string
	Emails int
	Calls  int
	Parts  Parts // summed over every call
	// Turns are the prompt tokens of each email's k-th call, summed.
	Turns []int
	// TurnEmails counts the emails that made a k-th call.
	TurnEmails []int
	// Output is the output tokens the answers reported, summed.
	Output int
}

// wire is the part of a generateContent request the split reads.
type wire struct {
	Contents          []wireContent   `json:"contents"`
	SystemInstruction *wireContent    `json:"systemInstruction"`
	Tools             json.RawMessage `json:"tools"`
	ToolConfig        json.RawMessage `json:"toolConfig"`
	CachedContent     string          `json:"cachedContent"`
	GenerationConfig  *struct {
		ResponseSchema json.RawMessage `json:"responseSchema"`
	} `json:"generationConfig"`
}

type wireContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text             string          `json:"text"`
		InlineData       json.RawMessage `json:"inlineData"`
		FunctionCall     json.RawMessage `json:"functionCall"`
		FunctionResponse json.RawMessage `json:"functionResponse"`
	} `json:"parts"`
}

func (c wireContent) text() string {
	var b strings.Builder
	for _, p := range c.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// Detection names the scenario of the emails whose scenario was chosen by
// a separate detection call: their detection call is counted with the
// email's.
const Detection = "(detection)"

// Measure splits bodies (one run's requests, in order, one email at a
// time) by email and part. main is the shared system instruction
// (main.md); scenarios maps each scenario's name to its system
// instruction (prompt.System of main.md and its body). A request whose
// system instruction is none of them (a detection call) is counted with
// the email whose loop follows it.
// outputs, when not nil, are the output tokens of each body's answer.
func Measure(ctx context.Context, c Counter, main string, scenarios map[string]string, bodies [][]byte, outputs []int) (map[string]*Scenario, error) {
	byText := map[string]string{}
	for name, sys := range scenarios {
		byText[sys] = name
	}
	out := map[string]*Scenario{}
	count := func(s string) (int, error) { return c.Count(ctx, s) }
	var (
		cur     *Scenario
		first   string // the current email's first user turn
		turn    int
		pending []Parts // detection calls not yet given to an email
		pendOut int
	)
	for i, body := range bodies {
		answer := 0
		if i < len(outputs) {
			answer = outputs[i]
		}
		var w wire
		if err := json.Unmarshal(body, &w); err != nil {
			return nil, fmt.Errorf("request %d: %w", i, err)
		}
		var p Parts
		sys := ""
		if w.SystemInstruction != nil {
			sys = w.SystemInstruction.text()
		}
		name, isLoop := byText[sys]
		var err error
		switch {
		case isLoop:
			rest := strings.TrimPrefix(sys, strings.TrimSpace(main))
			if p.System, err = count(sys[:len(sys)-len(rest)]); err != nil {
				return nil, err
			}
			if p.Scenario, err = count(rest); err != nil {
				return nil, err
			}
		default:
			if p.System, err = count(sys); err != nil {
				return nil, err
			}
		}
		if p.Tools, err = count(string(w.Tools) + string(w.ToolConfig)); err != nil {
			return nil, err
		}
		for j, ct := range w.Contents {
			for _, part := range ct.Parts {
				var n int
				switch {
				case len(part.InlineData) > 0:
					n = ImageTokens
				case len(part.FunctionResponse) > 0:
					n, err = count(string(part.FunctionResponse))
				case len(part.FunctionCall) > 0:
					n, err = count(string(part.FunctionCall))
				case j == 0:
					// The look-ups the shop ran before the first turn
					// are function results, in the first user turn.
					var looked int
					text, lookups := splitLookups(part.Text)
					if looked, err = count(lookups); err == nil {
						p.Results += looked
						n, err = count(text)
					}
				default:
					n, err = count(part.Text)
				}
				if err != nil {
					return nil, err
				}
				switch {
				case j == 0:
					p.Email += n
				case len(part.FunctionResponse) > 0:
					p.Results += n
				default:
					p.History += n
				}
			}
		}
		if !isLoop {
			pending = append(pending, p)
			pendOut += answer
			continue
		}
		email := ""
		if len(w.Contents) > 0 {
			email = w.Contents[0].text()
		}
		if cur == nil || email != first || cur.Name != name {
			cur, first, turn = out[name], email, 0
			if cur == nil {
				cur = &Scenario{Name: name}
				out[name] = cur
			}
			cur.Emails++
			for _, d := range pending {
				cur.record(turn, d)
				turn++
			}
			cur.Output += pendOut
			pending, pendOut = nil, 0
		}
		cur.Output += answer
		cur.record(turn, p)
		turn++
	}
	if len(pending) > 0 {
		s := &Scenario{Name: Detection, Emails: 1, Output: pendOut}
		for k, d := range pending {
			s.record(k, d)
		}
		out[Detection] = s
	}
	return out, nil
}

func (s *Scenario) record(turn int, p Parts) {
	s.Calls++
	s.Parts.add(p)
	for len(s.Turns) <= turn {
		s.Turns = append(s.Turns, 0)
		s.TurnEmails = append(s.TurnEmails, 0)
	}
	s.Turns[turn] += p.Prompt()
	s.TurnEmails[turn]++
}

// Report reports m with b.ReportMetric, one sub-benchmark per scenario and
// one for all of them ("all"): model calls and prompt tokens per email
// (answered by the model: emails that made no call are not in m), each
// part's tokens per email, the share of the prompt tokens in the stable
// prefix (what a cache could serve), and the mean prompt tokens of each
// turn (turn1 is the first call of an email, detection included).
func Report(b *testing.B, m map[string]*Scenario) {
	names := slices.Sorted(maps.Keys(m))
	all := &Scenario{Name: "all"}
	for _, n := range names {
		s := m[n]
		all.Emails += s.Emails
		all.Calls += s.Calls
		all.Output += s.Output
		all.Parts.add(s.Parts)
		for k := range s.Turns {
			for len(all.Turns) <= k {
				all.Turns, all.TurnEmails = append(all.Turns, 0), append(all.TurnEmails, 0)
			}
			all.Turns[k] += s.Turns[k]
			all.TurnEmails[k] += s.TurnEmails[k]
		}
	}
	for _, s := range append(slicesOf(m, names), all) {
		b.Run("scenario="+s.Name, func(b *testing.B) {
			for range b.N {
			}
			e := float64(max(s.Emails, 1))
			p := s.Parts
			b.ReportMetric(float64(s.Emails), "emails")
			b.ReportMetric(float64(s.Calls)/e, "calls/email")
			b.ReportMetric(float64(p.Prompt())/e, "prompt-tok/email")
			b.ReportMetric(float64(p.System)/e, "system-tok/email")
			b.ReportMetric(float64(p.Scenario)/e, "scenario-tok/email")
			b.ReportMetric(float64(p.Tools)/e, "tools-tok/email")
			b.ReportMetric(float64(p.Email)/e, "email-tok/email")
			b.ReportMetric(float64(p.History)/e, "history-tok/email")
			b.ReportMetric(float64(p.Results)/e, "results-tok/email")
			b.ReportMetric(float64(s.Output)/e, "output-tok/email")
			if p.Prompt() > 0 {
				b.ReportMetric(100*float64(p.Prefix())/float64(p.Prompt()), "cacheable-%")
			}
			// At Gemini 2.5 Flash's list prices: every prompt token at the
			// input price, then the stable prefix at the cached price.
			uncached := float64(p.Prompt())*FlashInput + float64(s.Output)*FlashOutput
			cached := float64(p.Prompt()-p.Prefix())*FlashInput + float64(p.Prefix())*FlashCachedInput + float64(s.Output)*FlashOutput
			b.ReportMetric(1000*uncached/1e6/e, "usd/1000emails")
			b.ReportMetric(1000*cached/1e6/e, "usd/1000emails-prefix-cached")
			for k, t := range s.Turns {
				b.ReportMetric(float64(t)/float64(max(s.TurnEmails[k], 1)), fmt.Sprintf("turn%d-tok", k+1))
			}
		})
	}
}

func slicesOf(m map[string]*Scenario, names []string) []*Scenario {
	out := make([]*Scenario, len(names))
	for i, n := range names {
		out[i] = m[n]
	}
	return out
}

// MeasureAndReport counts the tokens of the recorded requests (bodies,
// with the output tokens of each answer) of a run over the scenarios set
// with CounterFromEnv, and reports them (Report).
func MeasureAndReport(b *testing.B, set *instructions.Scenarios, bodies [][]byte, outputs []int) {
	b.Helper()
	ctx := context.Background()
	counter, err := CounterFromEnv(ctx, model.DefaultModel)
	if err != nil {
		b.Fatal(err)
	}
	systems := map[string]string{}
	for _, sc := range set.Scenarios {
		systems[sc.Name] = prompt.System(set.Main, sc.Body)
	}
	m, err := Measure(ctx, counter, set.Main, systems, bodies, outputs)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("tokens counted by %s over %d model calls", counter.Name(), len(bodies))
	Report(b, m)
}

// CounterFromEnv is Live when TRIAGE_BENCH_COUNT_TOKENS is "live" and the
// environment configures Gemini (GEMINI_API_KEY), counting with model;
// else Estimate.
func CounterFromEnv(ctx context.Context, model string) (Counter, error) {
	if os.Getenv("TRIAGE_BENCH_COUNT_TOKENS") != "live" {
		return Estimate{}, nil
	}
	c, err := genai.NewClient(ctx, &genai.ClientConfig{})
	if err != nil {
		return nil, fmt.Errorf("TRIAGE_BENCH_COUNT_TOKENS=live: %w", err)
	}
	return &Live{Client: c, Model: model}, nil
}
