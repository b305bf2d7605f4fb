package agent

import (
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// choose returns the first usable candidate of resp, or nil and the reason
// none is usable. A candidate is usable when it has content that asks for at
// least one function or says something (non-empty, non-thought text), and
// its finish reason is STOP or unspecified; MAX_TOKENS is accepted only when
// the candidate holds a function call (a cut text answer is not an answer).
// SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII,
// MALFORMED_FUNCTION_CALL, OTHER and every other reason are unusable, and so
// is a response whose prompt was blocked.
func choose(resp *genai.GenerateContentResponse) (*genai.Candidate, string) {
	if resp == nil {
		return nil, "empty response"
	}
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" && pf.BlockReason != genai.BlockedReasonUnspecified {
		return nil, fmt.Sprintf("prompt blocked: %s", pf.BlockReason)
	}
	if len(resp.Candidates) == 0 {
		return nil, "no candidates"
	}
	var reasons []string
	for i, c := range resp.Candidates {
		if c == nil {
			reasons = append(reasons, fmt.Sprintf("candidate %d: empty", i))
			continue
		}
		if c.Content == nil || len(c.Content.Parts) == 0 {
			if c.FinishReason == genai.FinishReasonMaxTokens {
				reasons = append(reasons, fmt.Sprintf("candidate %d: %s", i, cutNote(c)))
			} else {
				reasons = append(reasons, fmt.Sprintf("candidate %d: no content (finish reason %q%s)", i, c.FinishReason, finishMessage(c)))
			}
			continue
		}
		calls := functionCalls(c.Content)
		if c.FinishReason == genai.FinishReasonMaxTokens && len(calls) == 0 {
			reasons = append(reasons, fmt.Sprintf("candidate %d: %s", i, cutNote(c)))
			continue
		}
		switch c.FinishReason {
		case "", genai.FinishReasonUnspecified, genai.FinishReasonStop:
		case genai.FinishReasonMaxTokens:
		default:
			reasons = append(reasons, fmt.Sprintf("candidate %d: finish reason %s%s", i, c.FinishReason, finishMessage(c)))
			continue
		}
		if len(calls) == 0 && strings.TrimSpace(textOf(c.Content)) == "" {
			reasons = append(reasons, fmt.Sprintf("candidate %d: neither function calls nor text", i))
			continue
		}
		return c, ""
	}
	return nil, strings.Join(reasons, "; ")
}

// cutNote says that c was cut at the output token limit, with the
// provider's own words when it gave some.
func cutNote(c *genai.Candidate) string {
	return "cut at the output token limit (finish reason MAX_TOKENS" + finishMessage(c) + "): the model's answer was longer than the max output tokens setting allows"
}

// finishMessage is "; " and c's finish message, or "" when it has none
// (bounded: it is the provider's text).
func finishMessage(c *genai.Candidate) string {
	m := strings.TrimSpace(c.FinishMessage)
	if m == "" {
		return ""
	}
	if len(m) > 200 {
		m = strings.ToValidUTF8(m[:200], "") + "..."
	}
	return "; " + m
}

// functionCalls returns the function calls of content, in order.
func functionCalls(content *genai.Content) []*genai.FunctionCall {
	var calls []*genai.FunctionCall
	for _, p := range content.Parts {
		if p != nil && p.FunctionCall != nil {
			calls = append(calls, p.FunctionCall)
		}
	}
	return calls
}

// textOf joins the visible (non-thought) text parts of content.
func textOf(content *genai.Content) string {
	var b strings.Builder
	for _, p := range content.Parts {
		if p != nil && !p.Thought && p.Text != "" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// capCalls keeps the first max function-call parts of content and every
// other part, in order, and reports how many calls it dropped. content is
// returned unchanged when it holds max calls or fewer; otherwise a copy is
// returned (thought signatures ride on the parts kept). The dropped calls
// are never run, answered or sent back to the model.
func capCalls(content *genai.Content, max int) (*genai.Content, int) {
	n := 0
	for _, p := range content.Parts {
		if p != nil && p.FunctionCall != nil {
			n++
		}
	}
	if n <= max {
		return content, 0
	}
	kept := make([]*genai.Part, 0, max+len(content.Parts)-n)
	calls := 0
	for _, p := range content.Parts {
		if p != nil && p.FunctionCall != nil {
			if calls >= max {
				continue
			}
			calls++
		}
		kept = append(kept, p)
	}
	c := *content
	c.Parts = kept
	return &c, n - max
}
