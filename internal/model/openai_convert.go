package model

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// chatRequestFor converts a genai request to a chat completion request:
// the system instruction becomes a system message; a user content's
// function responses become tool messages (each answering its call's id),
// its text a user message; a model content becomes an assistant message
// with its text and tool calls (thought parts are the model's own and are
// not sent back). Function declarations become tools (ParametersJsonSchema
// as given, a genai.Schema converted to JSON Schema), the function calling
// mode tool_choice, and a JSON response MIME type a response format.
func chatRequestFor(model string, contents []*genai.Content, config *genai.GenerateContentConfig, in Inputs) (*chatRequest, error) {
	req := &chatRequest{Model: model}
	if config == nil {
		config = &genai.GenerateContentConfig{}
	}
	if si := config.SystemInstruction; si != nil {
		if t := contentText(si); t != "" {
			req.Messages = append(req.Messages, chatMessage{Role: "system", Content: &t})
		}
	}
	ids := &callIDs{}
	for i, c := range contents {
		if c == nil {
			continue
		}
		msgs, err := chatMessages(c, ids, in)
		if err != nil {
			return nil, fmt.Errorf("%w: contents[%d]: %w", errUnsupported, i, err)
		}
		req.Messages = append(req.Messages, msgs...)
	}
	for _, t := range config.Tools {
		if t == nil {
			continue
		}
		for _, d := range t.FunctionDeclarations {
			if d == nil {
				continue
			}
			var params any = d.ParametersJsonSchema
			if params == nil && d.Parameters != nil {
				params = jsonSchema(d.Parameters)
			}
			if params == nil {
				params = map[string]any{"type": "object", "properties": map[string]any{}}
			}
			req.Tools = append(req.Tools, chatTool{Type: "function", Function: chatFunctionDef{Name: d.Name, Description: d.Description, Parameters: params}})
		}
	}
	if len(req.Tools) > 0 {
		req.ToolChoice = "auto"
		if tc := config.ToolConfig; tc != nil && tc.FunctionCallingConfig != nil {
			switch tc.FunctionCallingConfig.Mode {
			case genai.FunctionCallingConfigModeNone:
				req.ToolChoice = "none"
			case genai.FunctionCallingConfigModeAny:
				req.ToolChoice = "required"
			}
		}
	}
	req.Temperature, req.TopP, req.Seed = config.Temperature, config.TopP, config.Seed
	req.MaxTokens = config.MaxOutputTokens
	req.Stop = config.StopSequences
	if strings.HasPrefix(config.ResponseMIMEType, "application/json") {
		var schema any = config.ResponseJsonSchema
		if schema == nil && config.ResponseSchema != nil {
			schema = jsonSchema(config.ResponseSchema)
		}
		if schema != nil {
			req.ResponseFormat = &chatResponseFormat{Type: "json_schema", JSONSchema: &chatJSONSchema{Name: "response", Schema: schema}}
		} else {
			req.ResponseFormat = &chatResponseFormat{Type: "json_object"}
		}
	}
	return req, nil
}

// callIDs gives a function call without an ID one ("call_N"), and its
// response the same: responses answer calls in order, by name.
type callIDs struct {
	n       int
	pending map[string][]string
}

func (c *callIDs) call(fc *genai.FunctionCall) string {
	id := fc.ID
	if id == "" {
		c.n++
		id = fmt.Sprintf("call_%d", c.n)
	}
	if c.pending == nil {
		c.pending = map[string][]string{}
	}
	c.pending[fc.Name] = append(c.pending[fc.Name], id)
	return id
}

func (c *callIDs) response(fr *genai.FunctionResponse) string {
	q := c.pending[fr.Name]
	if fr.ID != "" {
		for i, id := range q {
			if id == fr.ID {
				c.pending[fr.Name] = append(q[:i:i], q[i+1:]...)
				break
			}
		}
		return fr.ID
	}
	if len(q) == 0 {
		c.n++
		return fmt.Sprintf("call_%d", c.n)
	}
	c.pending[fr.Name] = q[1:]
	return q[0]
}

// chatMessages converts one content. A user content's inline images and
// PDFs become image_url and file parts of its message (data URLs), where
// in accepts them.
func chatMessages(c *genai.Content, ids *callIDs, in Inputs) ([]chatMessage, error) {
	var out []chatMessage
	var texts []string
	var calls []chatToolCall
	var media []chatPart
	for _, p := range c.Parts {
		switch {
		case p == nil, p.Thought:
		case p.FunctionCall != nil:
			args, err := marshal(orEmpty(p.FunctionCall.Args))
			if err != nil {
				return nil, fmt.Errorf("function call %s: %w", p.FunctionCall.Name, err)
			}
			calls = append(calls, chatToolCall{ID: ids.call(p.FunctionCall), Type: "function",
				Function: chatFunctionCall{Name: p.FunctionCall.Name, Arguments: string(args)}})
		case p.FunctionResponse != nil:
			body, err := marshal(orEmpty(p.FunctionResponse.Response))
			if err != nil {
				return nil, fmt.Errorf("function response %s: %w", p.FunctionResponse.Name, err)
			}
			s := string(body)
			out = append(out, chatMessage{Role: "tool", ToolCallID: ids.response(p.FunctionResponse), Content: &s})
		case p.Text != "":
			texts = append(texts, p.Text)
		case p.InlineData != nil && c.Role != genai.RoleModel:
			mp, err := mediaPart(p.InlineData, len(media)+1, in)
			if err != nil {
				return nil, err
			}
			media = append(media, mp)
		case p.InlineData != nil || p.FileData != nil:
			return nil, fmt.Errorf("binary or file parts cannot be sent")
		}
	}
	t := strings.Join(texts, "\n")
	if len(media) > 0 {
		parts := make([]chatPart, 0, len(media)+1)
		if t != "" {
			parts = append(parts, chatPart{Type: "text", Text: t})
		}
		return append(out, chatMessage{Role: "user", Parts: append(parts, media...)}), nil
	}
	if c.Role == genai.RoleModel {
		m := chatMessage{Role: "assistant", ToolCalls: calls}
		if t != "" || len(calls) == 0 {
			m.Content = &t
		}
		return append(out, m), nil
	}
	if t != "" {
		out = append(out, chatMessage{Role: "user", Content: &t})
	}
	return out, nil
}

// mediaPart is an attachment as a chat content part: an image as an
// image_url, a PDF as a file, each a base64 data URL (n numbers the file's
// name). A type in does not accept is an error: the pipeline sends none
// (Model.Reads).
func mediaPart(b *genai.Blob, n int, in Inputs) (chatPart, error) {
	mt := strings.ToLower(b.MIMEType)
	url := "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(b.Data)
	switch {
	case !in.Reads(mt):
	case strings.HasPrefix(mt, "image/"):
		return chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: url}}, nil
	default: // application/pdf
		return chatPart{Type: "file", File: &chatFile{Filename: fmt.Sprintf("attachment-%d.pdf", n), FileData: url}}, nil
	}
	return chatPart{}, fmt.Errorf("an attachment of type %s cannot be sent to this endpoint (model.attachments: %s)", mt, in)
}

// marshal encodes v as JSON with <, > and & as they are: the model reads
// what the tool wrote, not \u003c escapes.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func contentText(c *genai.Content) string {
	var parts []string
	for _, p := range c.Parts {
		if p != nil && !p.Thought && p.Text != "" {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// jsonSchema converts a genai.Schema (OpenAPI subset, upper-case types,
// nullable) to JSON Schema.
func jsonSchema(s *genai.Schema) map[string]any {
	if s == nil {
		return nil
	}
	out := map[string]any{}
	if s.Type != "" && s.Type != genai.TypeUnspecified {
		t := strings.ToLower(string(s.Type))
		if s.Nullable != nil && *s.Nullable {
			out["type"] = []any{t, "null"}
		} else {
			out["type"] = t
		}
	}
	set := func(k string, v any, ok bool) {
		if ok {
			out[k] = v
		}
	}
	set("title", s.Title, s.Title != "")
	set("description", s.Description, s.Description != "")
	set("format", s.Format, s.Format != "")
	set("pattern", s.Pattern, s.Pattern != "")
	set("default", s.Default, s.Default != nil)
	if len(s.Enum) > 0 {
		enum := make([]any, len(s.Enum))
		for i, e := range s.Enum {
			enum[i] = e
		}
		out["enum"] = enum
	}
	if len(s.Properties) > 0 {
		props := map[string]any{}
		for k, v := range s.Properties {
			props[k] = jsonSchema(v)
		}
		out["properties"] = props
	}
	if len(s.Required) > 0 {
		req := make([]any, len(s.Required))
		for i, r := range s.Required {
			req[i] = r
		}
		out["required"] = req
	}
	if s.Items != nil {
		out["items"] = jsonSchema(s.Items)
	}
	if len(s.AnyOf) > 0 {
		alts := make([]any, len(s.AnyOf))
		for i, a := range s.AnyOf {
			alts[i] = jsonSchema(a)
		}
		out["anyOf"] = alts
	}
	for k, v := range map[string]*int64{"minItems": s.MinItems, "maxItems": s.MaxItems, "minLength": s.MinLength,
		"maxLength": s.MaxLength, "minProperties": s.MinProperties, "maxProperties": s.MaxProperties} {
		if v != nil {
			out[k] = *v
		}
	}
	for k, v := range map[string]*float64{"minimum": s.Minimum, "maximum": s.Maximum} {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

// fromChat converts a chat completion answer: each choice becomes a
// candidate whose content holds the message's text and its tool calls as
// FunctionCall parts (ID = the call's id). finish_reason maps to STOP
// (stop, tool_calls), MAX_TOKENS (length) or SAFETY (content_filter); a
// refusal is a SAFETY candidate without content, and tool call arguments
// that are not a JSON object make the candidate MALFORMED_FUNCTION_CALL
// (MAX_TOKENS without content when the answer was cut at the token limit),
// so the agent treats them as the unusable answers they are; the finish
// message names the endpoint's finish_reason.
func fromChat(cr *chatResponse) *genai.GenerateContentResponse {
	resp := &genai.GenerateContentResponse{ResponseID: cr.ID, ModelVersion: cr.Model}
	if u := cr.Usage; u != nil {
		m := &genai.GenerateContentResponseUsageMetadata{
			PromptTokenCount: u.PromptTokens, CandidatesTokenCount: u.CompletionTokens, TotalTokenCount: u.TotalTokens}
		if d := u.PromptDetails; d != nil {
			m.CachedContentTokenCount = min(max(d.CachedTokens, 0), u.PromptTokens)
		}
		// Gemini counts thinking apart from the answer; OpenAI within
		// completion_tokens.
		if d := u.CompletionDetails; d != nil && d.ReasoningTokens > 0 && d.ReasoningTokens <= u.CompletionTokens {
			m.ThoughtsTokenCount = d.ReasoningTokens
			m.CandidatesTokenCount = u.CompletionTokens - d.ReasoningTokens
		}
		resp.UsageMetadata = m
	}
	for _, ch := range cr.Choices {
		cand := &genai.Candidate{Index: int32(ch.Index), FinishReason: finishReason(ch.FinishReason)}
		resp.Candidates = append(resp.Candidates, cand)
		m := ch.Message
		if m.Refusal != "" {
			cand.FinishReason, cand.FinishMessage = genai.FinishReasonSafety, m.Refusal
			continue
		}
		content := &genai.Content{Role: genai.RoleModel}
		if m.Content != nil && *m.Content != "" {
			content.Parts = append(content.Parts, &genai.Part{Text: *m.Content})
		}
		for _, tc := range m.ToolCalls {
			var args map[string]any
			if strings.TrimSpace(tc.Function.Arguments) != "" {
				if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil || args == nil {
					// A call cut at the token limit is a cut answer, and
					// says so; other bad arguments are a malformed call.
					if cand.FinishReason != genai.FinishReasonMaxTokens {
						cand.FinishReason = genai.FinishReasonMalformedFunctionCall
					}
					cand.FinishMessage = fmt.Sprintf("finish_reason %s: arguments of %s are not a JSON object", cmp.Or(ch.FinishReason, "none"), tc.Function.Name)
					content = nil
					break
				}
			}
			content.Parts = append(content.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: tc.ID, Name: tc.Function.Name, Args: orEmpty(args)}})
		}
		if content != nil && len(content.Parts) > 0 {
			cand.Content = content
		}
	}
	return resp
}

func finishReason(r string) genai.FinishReason {
	switch r {
	case "stop", "tool_calls", "function_call", "":
		return genai.FinishReasonStop
	case "length":
		return genai.FinishReasonMaxTokens
	case "content_filter":
		return genai.FinishReasonSafety
	}
	return genai.FinishReasonOther
}
