// Package agent runs the bounded Gemini function-calling loop for one email:
// it sends the history to a Model, executes the function calls the model asks
// for through Tools, returns the responses, and stops on a final answer, on a
// successful final function, or on a limit.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/genai"
)

// Model generates one model turn. *Gemini implements it over *genai.Client;
// tests and the offline model reach it through the same type.
type Model interface {
	GenerateContent(ctx context.Context, model string, contents []*genai.Content, config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error)
}

// Gate is implemented by a Model that may have to wait before a call (a
// model budget shared by several processes): the loop calls Wait before
// each attempt, outside the per-turn timeout, so a wait for the budget
// never counts as a slow model turn (it still counts against the email's
// deadline). The context Wait returns is the one the call is made with:
// it may carry what Wait learnt of the call (its estimated tokens).
type Gate interface {
	Wait(ctx context.Context, contents []*genai.Content, config *genai.GenerateContentConfig) (context.Context, error)
}

// Tools executes the function calls of one email (the dispatcher's
// Session).
type Tools interface {
	// StartTurn says that the calls that follow belong to a new model turn:
	// the loop calls it before running the calls of each turn (the
	// dispatcher's per-turn call cap, and requirements that must have been
	// met in an earlier turn).
	StartTurn()
	// Call executes one function call. It must never panic on bad input;
	// refusals come back as a Response that is not OK.
	Call(ctx context.Context, name string, args map[string]any) Response
	// Halt, asked after a turn's calls unless the final function succeeded,
	// ends the loop with its error when it is not nil, without another
	// model call: the calls met something another turn cannot change (a
	// reply the mail server refused for good, a limit reached).
	Halt() error
}

// ToolCall is one function call of a model turn (TurnTools).
type ToolCall struct {
	Name string
	Args map[string]any
}

// TurnTools is implemented by Tools that take the calls of one model turn
// together (the dispatcher runs a turn of look-ups at once): the loop
// passes every call of the turn to CallTurn instead of calling Call once
// per call. It returns one Response per call, in call order.
type TurnTools interface {
	Tools
	CallTurn(ctx context.Context, calls []ToolCall) []Response
}

// Sentinel stop reasons (Result.Stop), wrapped where useful.
var (
	ErrMaxTurns        = errors.New("agent: max turns reached")
	ErrTurnTimeout     = errors.New("agent: model turn timed out")
	ErrDeadline        = errors.New("agent: total deadline exceeded")
	ErrInvalidResponse = errors.New("agent: invalid model response")
	ErrModel           = errors.New("agent: model error")
	// ErrNoFinalCall: the model answered in text after its one nudge and
	// never called Request.FinalFunction.
	ErrNoFinalCall = errors.New("agent: the model ended with text, without calling the final function")
	// ErrFinalRefused: Request.FinalFunction failed MaxFinalRefusals times
	// with the same error code: the model was told twice what was wrong
	// and did not correct it.
	ErrFinalRefused = errors.New("agent: the final function was refused again")
)

// MaxFinalRefusals is how many failures of the final function with one
// error code end the loop: the first two are the model's chances to
// correct its call, the third shows it will not.
const MaxFinalRefusals = 3

// Config holds the loop limits; zero values get defaults in New.
type Config struct {
	Model     Model  // required
	ModelName string // default "gemini-2.5-flash"
	MaxTurns  int    // default 10
	// MaxCallsPerTurn caps the function calls of one model turn that are
	// kept at all (default 16): the excess is refused unrun, dropped from
	// the history, and counted in Result.RefusedCalls.
	MaxCallsPerTurn int
	TurnTimeout     time.Duration // default 30s
	Deadline        time.Duration // total per email, default 120s
	Temperature     *float32      // default 0
	// MaxOutputTokens bounds the output of every model call (default
	// DefaultMaxOutputTokens; Gemini counts its thinking in it): a model
	// that loops stops there instead of running until its context is full.
	MaxOutputTokens int32
	// ToolChoice is how the loop's turns may answer: ToolChoiceAuto (the
	// default) lets the model answer in text, ToolChoiceRequired makes
	// every turn of a request with a FinalFunction a function call (small
	// local models answer in text otherwise).
	ToolChoice ToolChoice
	// Retry for transient API errors (408, 429, 5xx, transport).
	MaxRetries int                                              // default 3; negative disables retries
	RetryBase  time.Duration                                    // default 500ms
	RetryMax   time.Duration                                    // default 8s
	Sleep      func(ctx context.Context, d time.Duration) error // injectable; default real sleep honouring ctx
	Logger     *slog.Logger                                     // default discard
}

// ToolChoice says whether a turn must call a function (Config.ToolChoice).
type ToolChoice string

// Tool choices.
const (
	ToolChoiceAuto     ToolChoice = "auto"
	ToolChoiceRequired ToolChoice = "required"
)

// ToolChoices lists the tool choices, default first, as the setting
// accepts them.
var ToolChoices = []string{string(ToolChoiceAuto), string(ToolChoiceRequired)}

// Defaults applied by New.
const (
	// DefaultMaxOutputTokens is room for a long reply and Gemini's
	// thinking, and still a bound on a local model that never stops.
	DefaultMaxOutputTokens = 8192
	DefaultModelName       = "gemini-2.5-flash"
	DefaultMaxTurns        = 10
	DefaultMaxCallsPerTurn = 16
	DefaultTurnTimeout     = 30 * time.Second
	DefaultDeadline        = 120 * time.Second
	DefaultMaxRetries      = 3
	DefaultRetryBase       = 500 * time.Millisecond
	DefaultRetryMax        = 8 * time.Second
)

// correctiveNote is appended as a user turn after an invalid model response.
const correctiveNote = "Your previous reply could not be used (%s). " +
	"Reply again: either call one of the declared functions with valid arguments, " +
	"or answer in plain text."

// refusedNote follows the function responses of a turn that asked for more
// than MaxCallsPerTurn calls.
const refusedNote = "%d further function calls of your last turn were refused and not run: at most %d calls per turn. Ask again for what you still need, fewer at once."

// nudgeNote answers a text-only turn when the final function has not
// succeeded: it says nothing was sent and names the final function and the
// declared functions not called yet.
func nudgeNote(req Request, called map[string]bool) string {
	var open []string
	for _, f := range req.Functions {
		if f != nil && f.Name != req.FinalFunction && !called[f.Name] {
			open = append(open, f.Name)
		}
	}
	var b strings.Builder
	b.WriteString("Nothing has been sent yet: your last reply was text without a function call, and text never reaches the customer. ")
	fmt.Fprintf(&b, "The task ends only when %s succeeds. ", req.FinalFunction)
	if len(open) > 0 {
		fmt.Fprintf(&b, "Functions not called yet that the instructions may require first: %s. ", strings.Join(open, ", "))
	}
	fmt.Fprintf(&b, "Call the functions you need now, as function calls, and finish with %s.", req.FinalFunction)
	return b.String()
}

// Agent runs loops; safe for concurrent use (every Run builds its own
// GenerateContentConfig).
type Agent struct {
	cfg Config
	log *slog.Logger
}

// New checks cfg and applies defaults.
func New(cfg Config) (*Agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("agent: Config.Model is required")
	}
	switch cfg.ToolChoice {
	case "":
		cfg.ToolChoice = ToolChoiceAuto
	case ToolChoiceAuto, ToolChoiceRequired:
	default:
		return nil, fmt.Errorf("agent: tool choice %q: want %s or %s", cfg.ToolChoice, ToolChoiceAuto, ToolChoiceRequired)
	}
	if cfg.MaxOutputTokens == 0 {
		cfg.MaxOutputTokens = DefaultMaxOutputTokens
	}
	if cfg.MaxOutputTokens < 0 || cfg.MaxTurns < 0 || cfg.MaxCallsPerTurn < 0 || cfg.TurnTimeout < 0 || cfg.Deadline < 0 || cfg.RetryBase < 0 || cfg.RetryMax < 0 {
		return nil, errors.New("agent: negative limit in Config")
	}
	if cfg.ModelName == "" {
		cfg.ModelName = DefaultModelName
	}
	if cfg.MaxTurns == 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	if cfg.MaxCallsPerTurn == 0 {
		cfg.MaxCallsPerTurn = DefaultMaxCallsPerTurn
	}
	if cfg.TurnTimeout == 0 {
		cfg.TurnTimeout = DefaultTurnTimeout
	}
	if cfg.Deadline == 0 {
		cfg.Deadline = DefaultDeadline
	}
	if cfg.Temperature == nil {
		cfg.Temperature = genai.Ptr[float32](0)
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.RetryBase == 0 {
		cfg.RetryBase = DefaultRetryBase
	}
	if cfg.RetryMax == 0 {
		cfg.RetryMax = DefaultRetryMax
	}
	if cfg.RetryMax < cfg.RetryBase {
		cfg.RetryMax = cfg.RetryBase
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Agent{cfg: cfg, log: cfg.Logger}, nil
}

// Request is one loop's input.
type Request struct {
	System string
	Prompt string
	// Parts follow Prompt in the first user turn (the attachments the model
	// may see, as inline data).
	Parts     []*genai.Part
	Functions []*genai.FunctionDeclaration
	// FinalFunction ends the loop as soon as a call to it returns ok=true
	// (e.g. "send_email"); no further model call is made.
	FinalFunction string
	// Earlier are turns taken before this loop, after the first user turn:
	// an opening model turn and the user turn of its function responses
	// (Opened.Turns). Each model turn among them counts against MaxTurns.
	Earlier []*genai.Content
	// Answered are the functions that answered ok before the first turn
	// (look-ups the pipeline ran, whose results are in Prompt): a nudge
	// does not name them as not called yet.
	Answered []string
}

// Usage sums token counts over every model call, as the model reports
// them (Gemini's usageMetadata, an OpenAI-compatible endpoint's usage).
// Prompt counts every input token, Cached included: Cached is the part of
// Prompt the provider served from its context cache (explicit or implicit;
// billed at the cached-input price). Output counts the answer's tokens and
// Thoughts the model's thinking (billed as output).
type Usage struct {
	Prompt   int `json:"prompt"`
	Cached   int `json:"cached"`
	Output   int `json:"output"`
	Thoughts int `json:"thoughts,omitempty"`
	Total    int `json:"total"`
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.Prompt += o.Prompt
	u.Cached += o.Cached
	u.Output += o.Output
	u.Thoughts += o.Thoughts
	u.Total += o.Total
}

// UsageOf returns the token counts of one response (zero when it has none).
func UsageOf(resp *genai.GenerateContentResponse) Usage {
	if resp == nil || resp.UsageMetadata == nil {
		return Usage{}
	}
	m := resp.UsageMetadata
	return Usage{
		Prompt:   int(m.PromptTokenCount),
		Cached:   int(m.CachedContentTokenCount),
		Output:   int(m.CandidatesTokenCount),
		Thoughts: int(m.ThoughtsTokenCount),
		Total:    int(m.TotalTokenCount),
	}
}

// Result describes how the loop ended.
type Result struct {
	Text        string // final text, if the model ended with text
	Turns       int    // model turns that produced a usable candidate
	ModelCalls  int    // GenerateContent calls, retries included
	Usage       Usage
	FinalCalled bool // FinalFunction returned ok=true
	// RefusedCalls counts the function calls beyond Config.MaxCallsPerTurn
	// that were refused unrun (never passed to Tools).
	RefusedCalls int
	Degraded     bool  // stopped by a limit, invalid responses or model errors
	Stop         error // nil on a normal end; else wraps one of the Err* sentinels, or ctx's error when the caller canceled
}

// Run executes the loop. It returns an error only for programming errors
// (nil tools); every runtime problem is reported in Result.Stop.
//
// The loop keeps the whole conversation as []*genai.Content: the prompt as
// the first user turn, each chosen model candidate unchanged (thought
// signatures included) but for the arguments of its calls that failed,
// which are cut to MaxRefusedArgBytes (the model sees how its call began
// and the error), and after every model turn that asked for functions
// one user turn holding all the function responses, in call order, each
// echoing its call's ID. An invalid model response (no usable candidate, or
// neither calls nor text) is not kept; a short corrective note is added and
// the model is asked once more. That retry is once per email: a
// second invalid response, even after usable turns, stops the loop with
// ErrInvalidResponse. Invalid responses do not count as turns (MaxTurns),
// but every attempt counts in ModelCalls.
//
// When the request has a FinalFunction that has not succeeded yet, a turn
// with text and no function call ("I will check the warranty now") is kept
// and answered once per email with a nudge naming the final function and
// the declared functions not called yet; a second such turn ends the loop
// with ErrNoFinalCall (Result.Text holds its text). The final function's
// MaxFinalRefusals-th failure with one error code ends the loop with
// ErrFinalRefused, naming the code and the last message. Function calls run
// under the same total deadline as the model calls. Cancelling ctx stops the
// loop with Stop wrapping ctx's error.
func (a *Agent) Run(ctx context.Context, req Request, tools Tools) (Result, error) {
	if tools == nil {
		return Result{}, errors.New("agent: Run: nil Tools")
	}
	var res Result
	stop := func(err error) (Result, error) {
		res.Stop = err
		res.Degraded = true
		a.log.DebugContext(ctx, "agent stop", "reason", err, "turns", res.Turns, "model_calls", res.ModelCalls)
		return res, nil
	}

	// The total budget: every model call and tool call runs under dctx.
	dctx, cancel := context.WithTimeoutCause(ctx, a.cfg.Deadline, ErrDeadline)
	defer cancel()

	first := genai.NewContentFromText(req.Prompt, genai.RoleUser)
	first.Parts = append(first.Parts, req.Parts...)
	history := append([]*genai.Content{first}, req.Earlier...)
	invalidRetried, nudged := false, false
	called := map[string]bool{} // functions that answered ok=true
	res.Turns = earlier(req.Earlier, called)
	for _, name := range req.Answered {
		called[name] = true
	}
	refusals := map[ErrorCode]int{} // failures of the final function, by code
	for {
		if dctx.Err() != nil {
			return stop(ctxStop(dctx))
		}
		if res.Turns >= a.cfg.MaxTurns {
			return stop(fmt.Errorf("%w (%d)", ErrMaxTurns, a.cfg.MaxTurns))
		}

		resp, calls, err := a.generate(dctx, history, func() *genai.GenerateContentConfig { return a.turnConfig(req) })
		res.ModelCalls += calls
		res.Usage.Add(UsageOf(resp))
		if err != nil {
			return stop(err)
		}

		cand, reason := choose(resp)
		if cand == nil {
			a.log.DebugContext(ctx, "agent invalid response", "turn", res.Turns+1, "reason", reason, "retried", invalidRetried)
			if invalidRetried {
				return stop(fmt.Errorf("%w: %s", ErrInvalidResponse, reason))
			}
			invalidRetried = true
			history = append(history, genai.NewContentFromText(fmt.Sprintf(correctiveNote, reason), genai.RoleUser))
			continue
		}
		res.Turns++

		content := cand.Content
		if content.Role == "" {
			content.Role = genai.RoleModel
		}
		content, refused := capCalls(content, a.cfg.MaxCallsPerTurn)
		res.RefusedCalls += refused
		history = append(history, content)
		fcalls := functionCalls(content)
		text := textOf(content)
		a.log.DebugContext(ctx, "agent turn", "turn", res.Turns, "model_calls", res.ModelCalls,
			"finish_reason", string(cand.FinishReason), "functions", callNames(fcalls),
			"prompt_tokens", res.Usage.Prompt, "output_tokens", res.Usage.Output)

		if len(fcalls) == 0 {
			res.Text = text
			if req.FinalFunction == "" {
				return res, nil
			}
			if nudged {
				return stop(ErrNoFinalCall)
			}
			nudged = true
			history = append(history, genai.NewContentFromText(nudgeNote(req, called), genai.RoleUser))
			continue
		}
		res.Text = ""

		tools.StartTurn()
		parts := make([]*genai.Part, 0, len(fcalls))
		final := false
		var refusedAgain error
		failed := map[*genai.FunctionCall]bool{}
		resps := callTurn(dctx, tools, fcalls)
		for i, fc := range fcalls {
			resp := resps[i]
			ok := resp.OK
			a.log.DebugContext(ctx, "agent function", "turn", res.Turns, "name", fc.Name, "ok", ok)
			if ok {
				called[fc.Name] = true
			} else {
				failed[fc] = true
			}
			if ok && req.FinalFunction != "" && fc.Name == req.FinalFunction {
				final = true
			}
			if e := resp.Err; !ok && e != nil && req.FinalFunction != "" && fc.Name == req.FinalFunction {
				if refusals[e.Code]++; refusals[e.Code] == MaxFinalRefusals && refusedAgain == nil {
					refusedAgain = fmt.Errorf("%w: %s failed %d times with %s: %s", ErrFinalRefused, fc.Name, MaxFinalRefusals, e.Code, e.Message)
				}
			}
			parts = append(parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: fc.ID, Name: fc.Name, Response: resp.Envelope()}})
		}
		if refused > 0 {
			parts = append(parts, genai.NewPartFromText(fmt.Sprintf(refusedNote, refused, a.cfg.MaxCallsPerTurn)))
		}
		history = append(history, &genai.Content{Role: genai.RoleUser, Parts: parts})
		if len(failed) > 0 {
			keepRefused(content, failed)
		}
		if !final {
			if err := tools.Halt(); err != nil {
				return stop(err)
			}
			if refusedAgain != nil {
				return stop(refusedAgain)
			}
		}
		if final {
			res.FinalCalled = true
			res.Text = text
			return res, nil
		}
	}
}

// callTurn runs the calls of one turn, in order, through CallTurn when
// tools takes a turn together, else one Call at a time.
func callTurn(ctx context.Context, tools Tools, fcalls []*genai.FunctionCall) []Response {
	calls := make([]ToolCall, len(fcalls))
	for i, fc := range fcalls {
		calls[i] = ToolCall{Name: fc.Name, Args: fc.Args}
		if calls[i].Args == nil {
			calls[i].Args = map[string]any{}
		}
	}
	if tt, ok := tools.(TurnTools); ok {
		if resps := tt.CallTurn(ctx, calls); len(resps) == len(calls) {
			return resps
		}
		// A CallTurn that lost count answers nothing usable: every call
		// gets an error rather than another's response.
		out := make([]Response, len(calls))
		for i := range out {
			out[i] = Response{Err: &ToolError{Code: CodeNoResponse, Message: "no response for this call"}}
		}
		return out
	}
	resps := make([]Response, len(calls))
	for i, c := range calls {
		resps[i] = tools.Call(ctx, c.Name, c.Args)
	}
	return resps
}

// turnConfig builds a fresh config for one loop call: the SDK mutates the
// config it is given, so none is shared between calls or goroutines.
func (a *Agent) turnConfig(req Request) *genai.GenerateContentConfig {
	cfg := &genai.GenerateContentConfig{
		Temperature:     genai.Ptr(*a.cfg.Temperature),
		MaxOutputTokens: a.cfg.MaxOutputTokens,
		// One GenerateContent call is one HTTP request: ModelCalls stays honest.
		AutomaticContinuation: genai.Ptr(false),
	}
	if req.System != "" {
		cfg.SystemInstruction = genai.NewContentFromText(req.System, genai.RoleUser)
	}
	if len(req.Functions) > 0 {
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: req.Functions}}
		mode := genai.FunctionCallingConfigModeAuto
		// The loop ends when the final function succeeds: until then, with
		// ToolChoiceRequired, every turn calls a function. Without a final
		// function the model ends in text, so it must be free to.
		if a.cfg.ToolChoice == ToolChoiceRequired && req.FinalFunction != "" {
			mode = genai.FunctionCallingConfigModeAny
		}
		cfg.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: mode}}
	}
	return cfg
}

// ctxStop turns the end of ctx into a stop reason: ErrDeadline for the total
// budget, else the caller's own cancellation or deadline, wrapped.
func ctxStop(ctx context.Context) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrDeadline) {
		return ErrDeadline
	}
	if cause == nil {
		cause = ctx.Err()
	}
	return fmt.Errorf("agent: stopped: %w", cause)
}

func callNames(calls []*genai.FunctionCall) string {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}
