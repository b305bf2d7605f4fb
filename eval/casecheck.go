// The checks of one decoded case against the scenario set, each problem
// with its line.

package eval

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/mail"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"triage"
	"triage/internal/clients/tickets"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/model"
)

// checker validates one decoded case against the scenario set.
type checker struct {
	file  string
	root  *yaml.Node
	set   *instructions.Scenarios
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
		faults, err := model.ParseFaults(strings.Join(in.ModelFaults, ","))
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
		if (len(ec.BodyContains) > 0 || len(ec.BodyNotContains) > 0) && ec.FunctionName != dispatcher.FuncSendEmail {
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
		x.ReplyLanguage == "" && len(x.ReplyMentionsResults) == 0 && len(x.ReplyRubric) == 0 &&
		x.Decision == nil && len(x.Commitments) == 0 {
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
