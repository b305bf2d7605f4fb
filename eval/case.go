// Package eval runs scripted eval cases through the production pipeline with
// mock clients and judges the outcome: it loads and validates case files,
// runs each case through the real processor and dispatcher, checks the
// recorded function calls against the case's expectations, and reports for
// people (console), CI (JUnit XML) and diffing (JSON).
package eval

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"triage"
	"triage/internal/decision"
	"triage/internal/instructions"
	"triage/internal/model"
)

// Case is one eval case file (the basic format plus the extensions
// documented in docs/eval.md).
type Case struct {
	ID          string   `yaml:"scenario_id" json:"scenario_id"`
	Description string   `yaml:"description" json:"description"`
	Category    string   `yaml:"category" json:"category,omitempty"`
	Created     string   `yaml:"created" json:"created,omitempty"`
	Input       Input    `yaml:"input" json:"input"`
	Expected    Expected `yaml:"expected_output" json:"expected_output"`

	// File is the case file's path as given to Load.
	File string `yaml:"-" json:"file"`
	// Raw is the RFC 5322 message the case feeds to the processor.
	Raw []byte `yaml:"-" json:"-"`
	// Mocks are the parsed mock_function_responses.
	Mocks map[string][]MockResponse `yaml:"-" json:"mocks,omitempty"`
	// Faults are the parsed input.model_faults.
	Faults []model.Fault `yaml:"-" json:"model_faults,omitempty"`
}

// Input is the email and the mocked world around it.
type Input struct {
	Email *Email `yaml:"email" json:"email,omitempty"`
	// EML is a path, relative to the case file, of a raw message to use
	// instead of Email.
	EML                   string               `yaml:"eml" json:"eml,omitempty"`
	MockFunctionResponses map[string]yaml.Node `yaml:"mock_function_responses" json:"-"`
	// ModelFaults are injected into the offline model (ignored live).
	ModelFaults []string `yaml:"model_faults" json:"-"`
	// ReplyMode is the run's reply mode for this case: send (default),
	// draft, or auto (which drafts: a case has no review history); a
	// scenario's reply_mode still overrides it.
	ReplyMode triage.ReplyMode `yaml:"reply_mode" json:"reply_mode,omitempty"`
	// Jurisdiction is the policy's jurisdiction this case's decisions apply
	// (pl, eu, de, uk in the built-in policy); "" is the policy's default.
	Jurisdiction string `yaml:"jurisdiction" json:"jurisdiction,omitempty"`
	// Conversation is an existing ticket the email may follow up: it is
	// written into the case's own ticket store before the run.
	Conversation *Conversation `yaml:"conversation" json:"conversation,omitempty"`
	// Staff are the staff addresses notify_staff mails in this case (added
	// to the runner's).
	Staff []string `yaml:"staff" json:"staff,omitempty"`
	// FollowUps are the customer's next messages after our reply, and
	// SimulatedCustomer a model playing the customer in live runs (reply.go).
	FollowUps         []FollowUp         `yaml:"follow_ups" json:"follow_ups,omitempty"`
	SimulatedCustomer *SimulatedCustomer `yaml:"simulated_customer" json:"simulated_customer,omitempty"`
}

// Conversation is an existing ticket and its earlier messages.
type Conversation struct {
	TicketID      string `yaml:"ticket_id" json:"ticket_id"`
	Status        string `yaml:"status" json:"status,omitempty"`
	TakenOver     bool   `yaml:"taken_over" json:"taken_over,omitempty"`
	Owner         string `yaml:"owner" json:"owner,omitempty"`
	CustomerEmail string `yaml:"customer_email" json:"customer_email,omitempty"` // default: the email's From
	SerialNumber  string `yaml:"serial_number" json:"serial_number,omitempty"`
	Summary       string `yaml:"summary" json:"summary,omitempty"`
	// Messages are the conversation's earlier messages, oldest first.
	Messages []ConversationMessage `yaml:"messages" json:"messages"`
}

// ConversationMessage is one earlier message: the customer's (direction in,
// the default; its text becomes a note) or our reply (out).
type ConversationMessage struct {
	MessageID string `yaml:"message_id" json:"message_id"`
	Direction string `yaml:"direction" json:"direction,omitempty"`
	From      string `yaml:"from" json:"from,omitempty"`
	Subject   string `yaml:"subject" json:"subject,omitempty"`
	Text      string `yaml:"text" json:"text,omitempty"`
}

// Email is the case's inline email.
type Email struct {
	Subject  string `yaml:"subject" json:"subject"`
	Body     string `yaml:"body" json:"body"`
	From     string `yaml:"from" json:"from"`
	Received string `yaml:"received" json:"received,omitempty"`
	// Headers are extra header fields (e.g. Auto-Submitted, Reply-To); they
	// replace the generated ones of the same name.
	Headers map[string]string `yaml:"headers" json:"headers,omitempty"`
	// Attachments are files attached after the body (multipart/mixed).
	Attachments []Attachment `yaml:"attachments" json:"attachments,omitempty"`
}

// Expected is expected_output.
type Expected struct {
	ScenarioInstructionUsed string        `yaml:"scenario_instruction_used" json:"scenario_instruction_used,omitempty"`
	Status                  triage.Status `yaml:"status" json:"status,omitempty"`
	Reason                  triage.Reason `yaml:"reason" json:"reason,omitempty"`
	// Match is how ExpectedFunctionCalls are compared: exact (default),
	// in_order, any_order or subset.
	Match                  string         `yaml:"match" json:"match,omitempty"`
	ExpectedFunctionCalls  []ExpectedCall `yaml:"expected_function_calls" json:"expected_function_calls,omitempty"`
	ForbiddenFunctionCalls []Forbidden    `yaml:"forbidden_function_calls" json:"forbidden_function_calls,omitempty"`
	// BodyNotContains applies to every send_email body the model produced.
	BodyNotContains []string `yaml:"body_not_contains" json:"body_not_contains,omitempty"`
	MaxModelCalls   *int     `yaml:"max_model_calls" json:"max_model_calls,omitempty"`
	// ProcessingTimeMS is a time budget: the case fails when processing
	// takes longer (0 = none).
	ProcessingTimeMS int64 `yaml:"processing_time_ms" json:"processing_time_ms,omitempty"`
	// Conversation expectations: the ticket the email belongs to, whether
	// it joined an existing conversation, whether it was escalated.
	TicketID  string `yaml:"ticket_id" json:"ticket_id,omitempty"`
	Followup  *bool  `yaml:"followup" json:"followup,omitempty"`
	Escalated *bool  `yaml:"escalated" json:"escalated,omitempty"`
	// AttachmentsSent names the attachments the model was sent, in order
	// (an explicit [] means none; absent: not checked).
	AttachmentsSent []string `yaml:"attachments_sent" json:"attachments_sent,omitempty"`
	// Language is the outcome's language (ISO 639-1) the case expects.
	Language string `yaml:"language" json:"language,omitempty"`
	// Reply expectations (reply.go): the language the reply reads in, the
	// function results it must state (FUNCTION.KEY), and criteria in plain
	// words a model judge grades in live runs.
	ReplyLanguage        string   `yaml:"reply_language" json:"reply_language,omitempty"`
	ReplyMentionsResults []string `yaml:"reply_mentions_results" json:"reply_mentions_results,omitempty"`
	ReplyRubric          []string `yaml:"reply_rubric" json:"reply_rubric,omitempty"`
	// Decision is the decision the outcome must carry (its basis, and the
	// remedies in order when given); Commitments what the accepted reply
	// must commit to (in any order; an explicit [] is not checked).
	Decision    *ExpectedDecision `yaml:"decision" json:"decision,omitempty"`
	Commitments []string          `yaml:"commitments" json:"commitments,omitempty"`
}

// ExpectedDecision is expected_output.decision.
type ExpectedDecision struct {
	Basis    decision.Basis    `yaml:"basis" json:"basis"`
	Remedies []decision.Remedy `yaml:"remedies" json:"remedies,omitempty"`
	// Jurisdiction, when given, is the jurisdiction the decision applied.
	Jurisdiction string `yaml:"jurisdiction" json:"jurisdiction,omitempty"`
}

// ExpectedCall is one expected_function_calls item.
type ExpectedCall struct {
	FunctionName     string         `yaml:"function_name" json:"function_name"`
	Arguments        map[string]any `yaml:"arguments" json:"arguments,omitempty"`
	ArgumentsContain map[string]any `yaml:"arguments_contain" json:"arguments_contain,omitempty"`
	ResultContains   map[string]any `yaml:"result_contains" json:"result_contains,omitempty"`
	BodyContains     []string       `yaml:"body_contains" json:"body_contains,omitempty"`
	BodyNotContains  []string       `yaml:"body_not_contains" json:"body_not_contains,omitempty"`
	// Blocked expects a call the dispatcher refused (guardrail); by default
	// an expected call matches only calls that ran.
	Blocked bool `yaml:"blocked" json:"blocked,omitempty"`
}

// Forbidden is one forbidden_function_calls item: a bare function name or
// {function_name, arguments_contain}.
type Forbidden struct {
	FunctionName     string         `json:"function_name"`
	ArgumentsContain map[string]any `json:"arguments_contain,omitempty"`
}

// UnmarshalYAML accepts a scalar name or a mapping with known keys only.
func (f *Forbidden) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		f.FunctionName = n.Value
		return nil
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch k.Value {
			case "function_name":
				if err := v.Decode(&f.FunctionName); err != nil {
					return fmt.Errorf("line %d: function_name: %w", v.Line, err)
				}
			case "arguments_contain":
				if err := v.Decode(&f.ArgumentsContain); err != nil {
					return fmt.Errorf("line %d: arguments_contain: %w", v.Line, err)
				}
			default:
				return fmt.Errorf("line %d: field %s not found in type eval.Forbidden", k.Line, k.Value)
			}
		}
		return nil
	}
	return fmt.Errorf("line %d: a forbidden call is a function name or {function_name, arguments_contain}", n.Line)
}

// MockResponse is one mocked function result: Result, or Error to make the
// call fail.
type MockResponse struct {
	Result map[string]any `json:"result,omitempty"`
	Error  *MockError     `json:"error,omitempty"`
}

// MockError makes a mocked call fail with this code and message.
type MockError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Values of Expected.Match.
const (
	MatchExact    = "exact"
	MatchInOrder  = "in_order"
	MatchAnyOrder = "any_order"
	MatchSubset   = "subset"
)

var matchModes = []string{MatchExact, MatchInOrder, MatchAnyOrder, MatchSubset}

// Problem is one thing wrong with a case file.
type Problem struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	Msg  string `json:"message"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Msg)
}

// LoadError lists every problem found in the case files.
type LoadError struct {
	Problems []Problem
}

func (e *LoadError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return fmt.Sprintf("eval: %d problem(s) in case files:\n  %s", len(e.Problems), strings.Join(lines, "\n  "))
}

// Defaults for rendered emails.
const (
	// DefaultTo is the To of a rendered email: the support inbox.
	DefaultTo = "serwis@example.com"
	// DefaultReceived is used when input.email.received is empty.
	DefaultReceived = "2026-01-01T09:00:00Z"
)

// Load reads the case files: each path is a file or a directory whose
// *.yaml and *.yml files (not subdirectories) are cases. Every case is
// checked against set (scenario names, declared functions); all problems in
// all files are returned together as a *LoadError, each naming its file and
// line. Cases come back sorted by file name.
func Load(paths []string, set *instructions.Scenarios) ([]*Case, error) {
	if set == nil {
		return nil, errors.New("eval: Load: nil scenario set")
	}
	files, probs := caseFiles(paths)
	var cases []*Case
	seen := map[string]string{}
	for _, f := range files {
		c, ps := loadFile(f, set)
		probs = append(probs, ps...)
		if c == nil {
			continue
		}
		if prev, dup := seen[c.ID]; dup {
			probs = append(probs, Problem{File: f, Line: 1, Msg: fmt.Sprintf("scenario_id %q is also used by %s", c.ID, prev)})
			continue
		}
		seen[c.ID] = f
		if len(ps) == 0 {
			cases = append(cases, c)
		}
	}
	if len(probs) > 0 {
		return nil, &LoadError{Problems: probs}
	}
	return cases, nil
}

func caseFiles(paths []string) ([]string, []Problem) {
	var files []string
	var probs []Problem
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			probs = append(probs, Problem{File: p, Msg: err.Error()})
			continue
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			probs = append(probs, Problem{File: p, Msg: err.Error()})
			continue
		}
		n := 0
		for _, e := range ents {
			ext := filepath.Ext(e.Name())
			if e.Type().IsRegular() && (ext == ".yaml" || ext == ".yml") {
				files = append(files, filepath.Join(p, e.Name()))
				n++
			}
		}
		if n == 0 {
			probs = append(probs, Problem{File: p, Msg: "no case files (*.yaml, *.yml) in directory"})
		}
	}
	sort.Strings(files)
	return slices.Compact(files), probs
}

// yamlLine matches one yaml.v3 error line: "line 12: field foo not found in type eval.Case".
var (
	yamlLine     = regexp.MustCompile(`^\s*(?:yaml: )?line (\d+): (.*)$`)
	unknownField = regexp.MustCompile(`^field (\S+) not found in type eval\.(\w+)$`)
)

func loadFile(file string, set *instructions.Scenarios) (*Case, []Problem) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, []Problem{{File: file, Msg: err.Error()}}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlProblems(file, err)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, []Problem{{File: file, Msg: "empty case file"}}
	}
	c := &Case{File: file}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		return nil, yamlProblems(file, err)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, []Problem{{File: file, Msg: "more than one YAML document; a case file holds one case"}}
	}
	v := &checker{file: file, root: root.Content[0], set: set, c: c}
	v.check()
	return c, v.probs
}

// yamlProblems turns a yaml.v3 error into problems with lines.
func yamlProblems(file string, err error) []Problem {
	var te *yaml.TypeError
	var lines []string
	if errors.As(err, &te) {
		lines = te.Errors
	} else {
		lines = []string{err.Error()}
	}
	var out []Problem
	for _, l := range lines {
		p := Problem{File: file, Msg: strings.TrimPrefix(l, "yaml: ")}
		if m := yamlLine.FindStringSubmatch(l); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
			p.Msg = m[2]
			if u := unknownField.FindStringSubmatch(m[2]); u != nil {
				p.Msg = fmt.Sprintf("unknown field %q (in %s)", u[1], fieldContext(u[2]))
			}
		}
		out = append(out, p)
	}
	return out
}

func fieldContext(typ string) string {
	switch typ {
	case "Case":
		return "the case: scenario_id, description, category, created, input, expected_output"
	case "Input":
		return "input: email, eml, mock_function_responses, model_faults, reply_mode, jurisdiction, conversation, staff, follow_ups, simulated_customer"
	case "Email":
		return "input.email: subject, body, from, received, headers"
	case "Expected":
		return "expected_output: scenario_instruction_used, status, reason, match, expected_function_calls, forbidden_function_calls, body_not_contains, max_model_calls, processing_time_ms, ticket_id, followup, escalated, language, reply_language, reply_mentions_results, reply_rubric, decision, commitments"
	case "ExpectedCall":
		return "an expected call: function_name, arguments, arguments_contain, result_contains, body_contains, body_not_contains, blocked"
	case "FollowUp":
		return "a follow-up: subject, body, expected_output"
	case "SimulatedCustomer":
		return "input.simulated_customer: persona, goal, max_turns"
	case "Forbidden":
		return "a forbidden call: function_name, arguments_contain"
	}
	return typ
}
