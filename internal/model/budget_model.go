package model

import (
	"context"
	"encoding/json"
	"errors"

	"google.golang.org/genai"

	"triage/internal/agent"
)

// Budgeted keeps every call of Next within Budget: it takes one request and
// the call's estimated tokens before the call, settles the estimate with
// the tokens the response reports after it, and turns a 429 into a back-off
// for every process on the budget. The agent loop waits for the budget
// (Wait) before each call, outside its per-turn timeout.
type Budgeted struct {
	Next   agent.Model
	Budget *Budget
}

var (
	_ agent.Model = (*Budgeted)(nil)
	_ agent.Gate  = (*Budgeted)(nil)
)

// Wait blocks until the budget would admit the call. The context it
// returns carries the call's estimate, which GenerateContent then takes
// rather than counting the call again.
func (m *Budgeted) Wait(ctx context.Context, contents []*genai.Content, config *genai.GenerateContentConfig) (context.Context, error) {
	est := m.estimate(contents, config)
	if err := m.Budget.Wait(ctx, est); err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, estimateKey{}, estimate{config, est}), nil
}

// estimateKey is the context key of the estimate Wait made of a call.
type estimateKey struct{}

// estimate is Wait's estimate of the call made with config: a config is
// built for each attempt, so it tells the call.
type estimate struct {
	config *genai.GenerateContentConfig
	tokens int
}

// GenerateContent calls Next within the budget.
func (m *Budgeted) GenerateContent(ctx context.Context, model string, contents []*genai.Content, config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	est, ok := ctx.Value(estimateKey{}).(estimate)
	if !ok || est.config != config || config == nil {
		est.tokens = m.estimate(contents, config)
	}
	if err := m.Budget.Take(ctx, est.tokens); err != nil {
		return nil, err
	}
	resp, err := m.Next.GenerateContent(ctx, model, contents, config)
	// The budget's own errors never hide the model's answer.
	bctx := context.WithoutCancel(ctx)
	var ae genai.APIError
	var pae *genai.APIError
	switch {
	case errors.As(err, &ae) && ae.Code == 429, errors.As(err, &pae) && pae != nil && pae.Code == 429:
		if berr := m.Budget.BackoffAfter(bctx, agent.RetryDelay(err)); berr != nil {
			m.Budget.log.WarnContext(ctx, "model budget: back-off not recorded", "err", berr)
		}
	case resp != nil && resp.UsageMetadata != nil && resp.UsageMetadata.TotalTokenCount > 0:
		if berr := m.Budget.Settle(bctx, est.tokens, int(resp.UsageMetadata.TotalTokenCount)); berr != nil {
			m.Budget.log.WarnContext(ctx, "model budget: usage not recorded", "err", berr)
		}
	}
	return resp, err
}

// estimate is estimateTokens when the budget bounds tokens, and 0 when it does
// not: an estimate costs the encoding of every function call and result
// and a look at every declaration, for nothing when only requests are
// counted (or nothing is, and the budget only carries a 429's back-off).
func (m *Budgeted) estimate(contents []*genai.Content, config *genai.GenerateContentConfig) int {
	if m.Budget.cfg.TokensPerMinute == 0 {
		return 0
	}
	return estimateTokens(contents, config)
}

// estimateTokens is a call's tokens before it is made: about one token per four
// bytes of the text, function calls and responses, system instruction and
// function declarations sent, plus the output it may ask for.
func estimateTokens(contents []*genai.Content, config *genai.GenerateContentConfig) int {
	n := 0
	count := func(c *genai.Content) {
		if c == nil {
			return
		}
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			n += len(p.Text)
			if p.FunctionCall != nil {
				b, _ := json.Marshal(p.FunctionCall.Args)
				n += len(b) + len(p.FunctionCall.Name)
			}
			if p.FunctionResponse != nil {
				b, _ := json.Marshal(p.FunctionResponse.Response)
				n += len(b)
			}
			if p.InlineData != nil {
				n += len(p.InlineData.Data) / 3 // images and documents cost less per byte
			}
		}
	}
	for _, c := range contents {
		count(c)
	}
	out := 0
	if config != nil {
		count(config.SystemInstruction)
		out = int(config.MaxOutputTokens)
		for _, t := range config.Tools {
			if t == nil {
				continue
			}
			for _, f := range t.FunctionDeclarations {
				if f != nil {
					n += len(f.Name) + len(f.Description) + jsonSize(f.ParametersJsonSchema) + jsonSize(f.Parameters)
				}
			}
		}
	}
	return n/4 + out + 1
}

// jsonSize is about the length of v as JSON: a declaration's schema, read
// without encoding it when it is JSON values already.
func jsonSize(v any) int {
	switch v := v.(type) {
	case nil:
		return 0
	case string:
		return len(v) + 2
	case map[string]any:
		n := 2
		for k, x := range v {
			n += len(k) + 4 + jsonSize(x)
		}
		return n
	case []any:
		n := 2
		for _, x := range v {
			n += jsonSize(x) + 1
		}
		return n
	case []string:
		n := 2
		for _, x := range v {
			n += len(x) + 3
		}
		return n
	case bool, float64, int:
		return 4
	case *genai.Schema:
		if v == nil {
			return 0
		}
	}
	b, _ := json.Marshal(v)
	return len(b)
}
