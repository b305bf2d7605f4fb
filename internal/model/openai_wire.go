package model

import "encoding/json"

// The Chat Completions wire format: only the fields triage sends or reads.
// Reference: https://platform.openai.com/docs/api-reference/chat

// chatRequest is the body of POST {base}/chat/completions.
type chatRequest struct {
	Model          string              `json:"model"`
	Messages       []chatMessage       `json:"messages"`
	Tools          []chatTool          `json:"tools,omitempty"`
	ToolChoice     string              `json:"tool_choice,omitempty"` // auto | none | required
	Temperature    *float32            `json:"temperature,omitempty"`
	TopP           *float32            `json:"top_p,omitempty"`
	MaxTokens      int32               `json:"max_tokens,omitempty"`
	Seed           *int32              `json:"seed,omitempty"`
	Stop           []string            `json:"stop,omitempty"`
	ResponseFormat *chatResponseFormat `json:"response_format,omitempty"`
}

// chatMessage is one chat message. Content is a string, or null for an
// assistant message that only calls tools; a user message with
// attachments has Parts instead, sent as its content.
type chatMessage struct {
	Role       string         `json:"role"` // system | user | assistant | tool
	Content    *string        `json:"content"`
	Parts      []chatPart     `json:"-"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	// Refusal is the model's refusal message (a response only).
	Refusal string `json:"refusal,omitempty"`
}

// MarshalJSON writes Parts, when there are any, as the content.
func (m chatMessage) MarshalJSON() ([]byte, error) {
	type plain chatMessage
	if len(m.Parts) == 0 {
		return marshal(plain(m))
	}
	return marshal(struct {
		plain
		Content []chatPart `json:"content"`
	}{plain: plain(m), Content: m.Parts})
}

// chatPart is one part of a user message's content: text, an image (a
// URL, here a data URL) or a file (a PDF, as a data URL).
type chatPart struct {
	Type     string        `json:"type"` // text | image_url | file
	Text     string        `json:"text,omitempty"`
	ImageURL *chatImageURL `json:"image_url,omitempty"`
	File     *chatFile     `json:"file,omitempty"`
}

type chatImageURL struct {
	URL string `json:"url"`
}

type chatFile struct {
	Filename string `json:"filename"`
	FileData string `json:"file_data"`
}

// chatToolCall is one function call the assistant asks for.
type chatToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"` // function
	Function chatFunctionCall `json:"function"`
}

// chatFunctionCall is a tool call's function and its arguments, a JSON object
// encoded as a string.
type chatFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// chatTool declares one function.
type chatTool struct {
	Type     string          `json:"type"` // function
	Function chatFunctionDef `json:"function"`
}

// chatFunctionDef is a function's name, description and JSON Schema parameters.
type chatFunctionDef struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Parameters  any    `json:"parameters,omitempty"`
}

// chatResponseFormat asks for JSON output, optionally matching a schema.
type chatResponseFormat struct {
	Type       string          `json:"type"` // json_object | json_schema
	JSONSchema *chatJSONSchema `json:"json_schema,omitempty"`
}

// chatJSONSchema is the schema of a json_schema response format.
type chatJSONSchema struct {
	Name   string `json:"name"`
	Schema any    `json:"schema"`
	Strict bool   `json:"strict,omitempty"`
}

// chatResponse is a successful answer.
type chatResponse struct {
	ID      string       `json:"id"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *chatUsage   `json:"usage,omitempty"`
}

// chatChoice is one generated message.
type chatChoice struct {
	Index        int         `json:"index"`
	Message      chatMessage `json:"message"`
	FinishReason string      `json:"finish_reason"` // stop | length | tool_calls | content_filter
}

// chatUsage counts tokens. prompt_tokens_details.cached_tokens is the part
// of prompt_tokens the endpoint's prompt cache served;
// completion_tokens_details.reasoning_tokens the part of completion_tokens
// spent reasoning. Endpoints that have neither leave them out.
type chatUsage struct {
	PromptTokens     int32 `json:"prompt_tokens"`
	CompletionTokens int32 `json:"completion_tokens"`
	TotalTokens      int32 `json:"total_tokens"`
	PromptDetails    *struct {
		CachedTokens int32 `json:"cached_tokens"`
	} `json:"prompt_tokens_details,omitempty"`
	CompletionDetails *struct {
		ReasoningTokens int32 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details,omitempty"`
}

// chatError is the body of an error answer.
type chatError struct {
	Error struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"` // a string or a number, or null
	} `json:"error"`
}
