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
	"io/fs"
	"maps"
	"net/mail"
	"net/textproto"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"triage"
	"triage/internal/clients/tickets"
	"triage/internal/offline"
	"triage/internal/scenario"
)

// Case is one eval case file (the seed's format plus the extensions
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
	Faults []offline.Fault `yaml:"-" json:"model_faults,omitempty"`
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

// Email is the seed's inline email.
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
func Load(paths []string, set *scenario.Set) ([]*Case, error) {
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

func loadFile(file string, set *scenario.Set) (*Case, []Problem) {
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
		return "input: email, eml, mock_function_responses, model_faults, reply_mode, conversation, staff, follow_ups, simulated_customer"
	case "Email":
		return "input.email: subject, body, from, received, headers"
	case "Expected":
		return "expected_output: scenario_instruction_used, status, reason, match, expected_function_calls, forbidden_function_calls, body_not_contains, max_model_calls, processing_time_ms, ticket_id, followup, escalated, language, reply_language, reply_mentions_results, reply_rubric"
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

// checker validates one decoded case against the scenario set.
type checker struct {
	file  string
	root  *yaml.Node
	set   *scenario.Set
	c     *Case
	probs []Problem
}

// lineOf returns the line of the node at path (string keys, int indices),
// or of the deepest node found on the way.
func (v *checker) lineOf(path ...any) int {
	n := v.root
	line := n.Line
	for _, p := range path {
		var next *yaml.Node
		switch p := p.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == p {
						line = n.Content[i].Line
						next = n.Content[i+1]
						break
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && p < len(n.Content) {
				next = n.Content[p]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

func (v *checker) fail(line int, format string, a ...any) {
	v.probs = append(v.probs, Problem{File: v.file, Line: line, Msg: fmt.Sprintf(format, a...)})
}

func (v *checker) check() {
	c := v.c
	if strings.TrimSpace(c.ID) == "" {
		v.fail(v.lineOf("scenario_id"), "scenario_id is required")
	}
	v.checkInput()
	v.checkExpected()
	v.checkReplyExpectations(&c.Expected, "expected_output")
	v.checkTurns()
}

func (v *checker) checkInput() {
	c := v.c
	in := c.Input
	switch {
	case in.Email != nil && in.EML != "":
		v.fail(v.lineOf("input", "eml"), "input.email and input.eml are alternatives; give one")
	case in.Email == nil && in.EML == "":
		v.fail(v.lineOf("input"), "input.email or input.eml is required")
	case in.EML != "":
		p := in.EML
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(v.file), p)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				v.fail(v.lineOf("input", "eml"), "input.eml: %s does not exist (paths are relative to the case file)", p)
			} else {
				v.fail(v.lineOf("input", "eml"), "input.eml: %v", err)
			}
		} else {
			c.Raw = raw
		}
	default:
		v.checkEmail()
	}

	if !in.ReplyMode.Valid() {
		v.fail(v.lineOf("input", "reply_mode"), "input.reply_mode %q: want %s, %s or %s", in.ReplyMode, triage.ReplySend, triage.ReplyDraft, triage.ReplyAuto)
	}
	if len(in.ModelFaults) > 0 {
		faults, err := offline.ParseFaults(strings.Join(in.ModelFaults, ","))
		if err != nil {
			v.fail(v.lineOf("input", "model_faults"), "input.model_faults: %v", err)
		}
		c.Faults = faults
	}

	for i, a := range in.Staff {
		if _, err := mail.ParseAddress(a); err != nil {
			v.fail(v.lineOf("input", "staff"), "input.staff[%d] %q: %v", i, a, err)
		}
	}
	if cv := in.Conversation; cv != nil {
		v.checkConversation(cv)
	}

	declared := v.declared()
	names := slices.Sorted(maps.Keys(in.MockFunctionResponses))
	c.Mocks = map[string][]MockResponse{}
	for _, name := range names {
		node := in.MockFunctionResponses[name]
		line := v.lineOf("input", "mock_function_responses", name)
		if !declared[name] {
			v.fail(line, "input.mock_function_responses.%s: %s", name, v.notDeclared(name))
		}
		rs, err := parseMock(&node)
		if err != nil {
			v.fail(line, "input.mock_function_responses.%s: %v", name, err)
			continue
		}
		c.Mocks[name] = rs
	}
}

func (v *checker) checkConversation(cv *Conversation) {
	if _, err := tickets.ParseID(cv.TicketID); err != nil {
		v.fail(v.lineOf("input", "conversation", "ticket_id"), "input.conversation.ticket_id: %v", err)
	}
	if cv.CustomerEmail != "" {
		if _, err := mail.ParseAddress(cv.CustomerEmail); err != nil {
			v.fail(v.lineOf("input", "conversation", "customer_email"), "input.conversation.customer_email %q: %v", cv.CustomerEmail, err)
		}
	}
	seen := map[string]bool{}
	for i, m := range cv.Messages {
		line := v.lineOf("input", "conversation", "messages")
		switch {
		case !strings.HasPrefix(m.MessageID, "<") || !strings.HasSuffix(m.MessageID, ">") || !strings.Contains(m.MessageID, "@"):
			v.fail(line, "input.conversation.messages[%d].message_id %q: want <id@domain>", i, m.MessageID)
		case seen[m.MessageID]:
			v.fail(line, "input.conversation.messages[%d].message_id %s: given twice", i, m.MessageID)
		}
		seen[m.MessageID] = true
		if m.Direction != "" && m.Direction != tickets.Inbound && m.Direction != tickets.Outbound {
			v.fail(line, "input.conversation.messages[%d].direction %q: want in or out", i, m.Direction)
		}
	}
}

func (v *checker) checkEmail() {
	e := v.c.Input.Email
	if strings.TrimSpace(e.From) == "" {
		v.fail(v.lineOf("input", "email"), "input.email.from is required")
	} else if _, err := mail.ParseAddress(e.From); err != nil {
		v.fail(v.lineOf("input", "email", "from"), "input.email.from %q: %v", e.From, err)
	}
	if strings.TrimSpace(e.Body) == "" && strings.TrimSpace(e.Subject) == "" {
		v.fail(v.lineOf("input", "email"), "input.email needs a subject or a body")
	}
	if e.Received != "" {
		if _, err := parseReceived(e.Received); err != nil {
			v.fail(v.lineOf("input", "email", "received"), "input.email.received %q: want RFC 3339, e.g. 2026-01-18T10:00:00Z", e.Received)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(e.Headers)) {
		if !validHeaderName(k) {
			v.fail(v.lineOf("input", "email", "headers", k), "input.email.headers: %q is not a valid header name", k)
		}
		if strings.ContainsAny(e.Headers[k], "\r\n") {
			v.fail(v.lineOf("input", "email", "headers", k), "input.email.headers.%s: value must be one line", k)
		}
	}
	for _, p := range loadAttachments(e, filepath.Dir(v.c.File)) {
		v.fail(v.lineOf("input", "email", "attachments"), "%s", p)
	}
	if len(v.probs) == 0 {
		raw, err := Render(v.c.ID, e)
		if err != nil {
			v.fail(v.lineOf("input", "email"), "input.email: %v", err)
		}
		v.c.Raw = raw
	}
}

func parseReceived(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02", s)
}

func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if r <= ' ' || r >= 127 || r == ':' {
			return false
		}
	}
	return textproto.CanonicalMIMEHeaderKey(k) != ""
}

func (v *checker) checkExpected() {
	c := v.c
	x := &c.Expected
	if x.ScenarioInstructionUsed != "" && v.set.Get(x.ScenarioInstructionUsed) == nil {
		v.fail(v.lineOf("expected_output", "scenario_instruction_used"),
			"expected_output.scenario_instruction_used: no scenario %q (loaded: %s)", x.ScenarioInstructionUsed, strings.Join(v.set.Names(), ", "))
	}
	if x.Status != "" && !x.Status.Valid() {
		v.fail(v.lineOf("expected_output", "status"), "expected_output.status %q: want one of %s", x.Status, statusList())
	}
	if x.Reason != "" && x.Status == "" {
		v.fail(v.lineOf("expected_output", "reason"), "expected_output.reason needs expected_output.status")
	}
	if x.Match == "" {
		x.Match = MatchExact
	} else if !slices.Contains(matchModes, x.Match) {
		v.fail(v.lineOf("expected_output", "match"), "expected_output.match %q: want one of %s", x.Match, strings.Join(matchModes, ", "))
	}
	if x.MaxModelCalls != nil && *x.MaxModelCalls < 0 {
		v.fail(v.lineOf("expected_output", "max_model_calls"), "expected_output.max_model_calls must not be negative")
	}
	if x.ProcessingTimeMS < 0 {
		v.fail(v.lineOf("expected_output", "processing_time_ms"), "expected_output.processing_time_ms must not be negative")
	}
	if x.Status == triage.StatusSkipped && len(x.ExpectedFunctionCalls) > 0 {
		v.fail(v.lineOf("expected_output", "expected_function_calls"), "expected_output: a skipped email makes no function calls, but expected_function_calls is not empty")
	}
	declared := v.declared()
	for i, ec := range x.ExpectedFunctionCalls {
		base := []any{"expected_output", "expected_function_calls", i}
		field := fmt.Sprintf("expected_output.expected_function_calls[%d]", i)
		if ec.FunctionName == "" {
			v.fail(v.lineOf(base...), "%s.function_name is required", field)
			continue
		}
		if !declared[ec.FunctionName] {
			v.fail(v.lineOf(append(base, "function_name")...), "%s.function_name: %s", field, v.notDeclared(ec.FunctionName))
		}
		if (len(ec.BodyContains) > 0 || len(ec.BodyNotContains) > 0) && ec.FunctionName != "send_email" {
			v.fail(v.lineOf(append(base, "body_contains")...), "%s: body_contains and body_not_contains apply only to send_email", field)
		}
		x.ExpectedFunctionCalls[i].Arguments = jsonMap(ec.Arguments)
		x.ExpectedFunctionCalls[i].ArgumentsContain = jsonMap(ec.ArgumentsContain)
		x.ExpectedFunctionCalls[i].ResultContains = jsonMap(ec.ResultContains)
	}
	known := v.allFunctions()
	for i, f := range x.ForbiddenFunctionCalls {
		line := v.lineOf("expected_output", "forbidden_function_calls", i)
		if f.FunctionName == "" {
			v.fail(line, "expected_output.forbidden_function_calls[%d]: function_name is required", i)
		} else if !known[f.FunctionName] {
			v.fail(line, "expected_output.forbidden_function_calls[%d]: no loaded scenario declares function %q", i, f.FunctionName)
		}
		x.ForbiddenFunctionCalls[i].ArgumentsContain = jsonMap(f.ArgumentsContain)
	}
	if x.ScenarioInstructionUsed == "" && x.Status == "" && len(x.ExpectedFunctionCalls) == 0 &&
		len(x.ForbiddenFunctionCalls) == 0 && len(x.BodyNotContains) == 0 && x.MaxModelCalls == nil &&
		x.ReplyLanguage == "" && len(x.ReplyMentionsResults) == 0 && len(x.ReplyRubric) == 0 {
		v.fail(v.lineOf("expected_output"), "expected_output states no expectation; a case must check something")
	}
}

// declared is the set of functions the case may refer to: those of the
// expected scenario, or of any scenario when none is expected.
func (v *checker) declared() map[string]bool {
	if sc := v.set.Get(v.c.Expected.ScenarioInstructionUsed); sc != nil {
		m := map[string]bool{}
		for _, f := range sc.Functions {
			m[f.Name] = true
		}
		return m
	}
	return v.allFunctions()
}

func (v *checker) allFunctions() map[string]bool {
	m := map[string]bool{}
	for _, sc := range v.set.Scenarios {
		for _, f := range sc.Functions {
			m[f.Name] = true
		}
	}
	return m
}

func (v *checker) notDeclared(name string) string {
	if sc := v.set.Get(v.c.Expected.ScenarioInstructionUsed); sc != nil {
		var names []string
		for _, f := range sc.Functions {
			names = append(names, f.Name)
		}
		return fmt.Sprintf("function %q is not declared by scenario %q (it declares: %s)", name, sc.Name, strings.Join(names, ", "))
	}
	return fmt.Sprintf("function %q is not declared by any loaded scenario", name)
}

// parseMock reads one mock_function_responses value: a mapping (returned
// every call), a sequence of mappings (one per call, the last repeating),
// or {error: {code, message}}.
func parseMock(n *yaml.Node) ([]MockResponse, error) {
	switch n.Kind {
	case yaml.MappingNode:
		r, err := parseMockOne(n)
		if err != nil {
			return nil, err
		}
		return []MockResponse{r}, nil
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return nil, errors.New("an empty list; give at least one response")
		}
		out := make([]MockResponse, 0, len(n.Content))
		for i, item := range n.Content {
			if item.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("[%d] (line %d): each response is a mapping", i, item.Line)
			}
			r, err := parseMockOne(item)
			if err != nil {
				return nil, fmt.Errorf("[%d] (line %d): %w", i, item.Line, err)
			}
			out = append(out, r)
		}
		return out, nil
	}
	return nil, errors.New("a mock response is a mapping, a list of mappings, or {error: {code, message}}")
}

func parseMockOne(n *yaml.Node) (MockResponse, error) {
	if len(n.Content) == 2 && n.Content[0].Value == "error" {
		en := n.Content[1]
		if en.Kind != yaml.MappingNode {
			return MockResponse{}, errors.New("error: want {code, message}")
		}
		e := &MockError{}
		for i := 0; i+1 < len(en.Content); i += 2 {
			k, val := en.Content[i], en.Content[i+1]
			switch k.Value {
			case "code":
				e.Code = val.Value
			case "message":
				e.Message = val.Value
			default:
				return MockResponse{}, fmt.Errorf("error: unknown field %q (want code, message)", k.Value)
			}
		}
		if e.Code == "" {
			return MockResponse{}, errors.New("error.code is required")
		}
		return MockResponse{Error: e}, nil
	}
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		return MockResponse{}, err
	}
	return MockResponse{Result: jsonMap(m)}, nil
}

// statusList spells the statuses a case may expect, for error messages.
func statusList() string {
	names := make([]string, len(triage.Statuses))
	for i, s := range triage.Statuses {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
