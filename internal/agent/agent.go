// Package agent runs the bounded Gemini function-calling loop for one email:
// it sends the history to a Model, executes the function calls the model asks
// for through Tools, returns the responses, and stops on a final answer, on a
// successful final function, or on a limit.
package agent

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"google.golang.org/genai"
)

// Model generates one model turn. *Gemini implements it over *genai.Client;
// tests and the offline model reach it through the same type.
type Model interface {
	GenerateContent(ctx context.Context, model string, contents []*genai.Content, config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error)
}

// Tools executes one function call and returns the response envelope:
// {"ok":true,"result":{...}} or {"ok":false,"error":{"code":..,"message":..}}.
// It must never panic on bad input; refusals come back as ok=false.
type Tools interface {
	Call(ctx context.Context, name string, args map[string]any) map[string]any
}

// Sentinel stop reasons (Result.Stop), wrapped where useful.
var (
	ErrMaxTurns        = errors.New("agent: max turns reached")
	ErrTurnTimeout     = errors.New("agent: model turn timed out")
	ErrDeadline        = errors.New("agent: total deadline exceeded")
	ErrInvalidResponse = errors.New("agent: invalid model response")
	ErrModel           = errors.New("agent: model error")
)

// Config holds the loop limits; zero values get defaults in New.
type Config struct {
	Model       Model         // required
	ModelName   string        // default "gemini-2.5-flash"
	MaxTurns    int           // default 10
	TurnTimeout time.Duration // default 30s
	Deadline    time.Duration // total per email, default 120s
	Temperature *float32      // default 0
	// Retry for transient API errors (408, 429, 5xx, transport).
	MaxRetries int                                              // default 3
	RetryBase  time.Duration                                    // default 500ms
	RetryMax   time.Duration                                    // default 8s
	Sleep      func(ctx context.Context, d time.Duration) error // injectable; default real sleep honouring ctx
	Logger     *slog.Logger                                     // default discard
}

// Agent runs loops; safe for concurrent use (every Run builds its own
// GenerateContentConfig).
type Agent struct{}

// New checks cfg and applies defaults.
func New(cfg Config) (*Agent, error) { panic("TODO") }

// Request is one loop's input.
type Request struct {
	System    string
	Prompt    string
	Functions []*genai.FunctionDeclaration
	// FinalFunction ends the loop as soon as a call to it returns ok=true
	// (e.g. "send_email"); no further model call is made.
	FinalFunction string
}

// Usage sums token counts over every model call.
type Usage struct {
	Prompt int `json:"prompt"`
	Output int `json:"output"`
	Total  int `json:"total"`
}

// Result describes how the loop ended.
type Result struct {
	Text        string // final text, if the model ended with text
	Turns       int    // model turns that produced a usable candidate
	ModelCalls  int    // GenerateContent calls, retries included
	Usage       Usage
	FinalCalled bool  // FinalFunction returned ok=true
	Degraded    bool  // stopped by a limit, invalid responses or model errors
	Stop        error // nil on a normal end; else wraps one of the Err* sentinels
}

// Run executes the loop. It returns an error only for programming errors
// (nil tools); every runtime problem is reported in Result.Stop.
func (a *Agent) Run(ctx context.Context, req Request, tools Tools) (Result, error) { panic("TODO") }

// Generate makes a single model call with the agent's retry policy and turn
// timeout (used by detection for structured-output calls). calls counts the
// attempts made.
func (a *Agent) Generate(ctx context.Context, contents []*genai.Content, config *genai.GenerateContentConfig) (resp *genai.GenerateContentResponse, calls int, err error) {
	panic("TODO")
}

// Temporary reports whether err is worth retrying (genai.APIError with code
// 408, 429 or 5xx; transport errors; not context cancellation).
func Temporary(err error) bool { panic("TODO") }
