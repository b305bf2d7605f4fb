package eval

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"triage/internal/agent"
	"triage/internal/dispatcher"
	"triage/internal/processor"
)

// Verdict is the validator's judgement of one run.
type Verdict struct {
	// Failures are messages such as
	// "Call 2 send_email: Body missing phrase 'SN98765'".
	Failures []string `json:"failures"`
	// CallNotes holds, per actual call (same index as the outcome's
	// function_calls), the failures that point at it.
	CallNotes [][]string `json:"call_notes,omitempty"`
}

// Passed reports whether there is no failure.
func (v Verdict) Passed() bool { return len(v.Failures) == 0 }

// Validate checks an outcome against the case's expectations.
func Validate(c *Case, o processor.Outcome) Verdict {
	x := c.Expected
	calls := o.FunctionCalls
	v := Verdict{CallNotes: make([][]string, len(calls))}
	fail := func(format string, a ...any) { v.Failures = append(v.Failures, fmt.Sprintf(format, a...)) }
	note := func(i int, msg string) {
		v.Failures = append(v.Failures, msg)
		v.CallNotes[i] = append(v.CallNotes[i], msg)
	}

	if x.ScenarioInstructionUsed != "" && o.Scenario != x.ScenarioInstructionUsed {
		fail("Scenario: expected %q, got %q (detection %s: %s)", x.ScenarioInstructionUsed, o.Scenario, o.Detection.Method, o.Detection.Reason)
	}
	if x.Status != "" && o.Status != x.Status {
		msg := fmt.Sprintf("Status: expected %q, got %q (reason %q", x.Status, o.Status, o.Reason)
		if o.Detail != "" {
			msg += ": " + o.Detail
		}
		fail("%s)", msg)
	} else if x.Reason != "" && o.Reason != x.Reason {
		fail("Reason: expected %q, got %q", x.Reason, o.Reason)
	}
	if x.TicketID != "" && o.TicketID != x.TicketID {
		fail("Ticket: expected %q, got %q", x.TicketID, o.TicketID)
	}
	if x.Followup != nil && o.Followup != *x.Followup {
		fail("Followup: expected %v, got %v", *x.Followup, o.Followup)
	}
	if x.Escalated != nil && o.Escalated != *x.Escalated {
		fail("Escalated: expected %v, got %v", *x.Escalated, o.Escalated)
	}
	if x.AttachmentsSent != nil {
		sent := []string{}
		for _, a := range o.Attachments {
			if a.Sent {
				sent = append(sent, a.Name)
			}
		}
		if !slices.Equal(sent, x.AttachmentsSent) {
			fail("Attachments sent to the model: expected %q, got %q", x.AttachmentsSent, sent)
		}
	}
	if d := x.Decision; d != nil {
		switch {
		case o.Decision == nil:
			fail("Decision: expected %s, got none", d.Basis)
		case o.Decision.Basis != d.Basis:
			fail("Decision: expected %s, got %s (%s)", d.Basis, o.Decision.Basis, strings.Join(o.Decision.Reasons, "; "))
		case d.Remedies != nil && !slices.Equal(o.Decision.Remedies, d.Remedies):
			fail("Decision remedies: expected %v, got %v", d.Remedies, o.Decision.Remedies)
		case d.Jurisdiction != "" && o.Decision.Jurisdiction != d.Jurisdiction:
			fail("Decision jurisdiction: expected %s, got %s", d.Jurisdiction, o.Decision.Jurisdiction)
		}
	}
	if len(x.Commitments) > 0 {
		got := make([]string, len(o.Commitments))
		for i, c := range o.Commitments {
			got[i] = string(c)
		}
		want := slices.Sorted(slices.Values(x.Commitments))
		if !slices.Equal(slices.Sorted(slices.Values(got)), want) {
			fail("Commitments: expected %v, got %v", want, got)
		}
	}
	if x.Language != "" && o.Language != x.Language {
		fail("Language: expected %q, got %q", x.Language, o.Language)
	}
	if x.MaxModelCalls != nil && o.ModelCalls > *x.MaxModelCalls {
		fail("Model calls: expected at most %d, got %d", *x.MaxModelCalls, o.ModelCalls)
	}

	mode := x.Match
	if mode == "" {
		mode = MatchExact
	}
	switch {
	case x.ExpectedFunctionCalls == nil:
		// Not given: the calls are not checked (an explicit [] means none).
	case mode == MatchExact:
		matchExact(x.ExpectedFunctionCalls, calls, fail, note)
	case mode == MatchInOrder:
		matchInOrder(x.ExpectedFunctionCalls, calls, fail)
	case mode == MatchAnyOrder || mode == MatchSubset:
		if mode == MatchAnyOrder && len(calls) != len(x.ExpectedFunctionCalls) {
			countMismatch(x.ExpectedFunctionCalls, calls, fail)
		}
		matchUnordered(x.ExpectedFunctionCalls, calls, fail)
	default:
		fail("Unknown match mode %q", mode)
	}

	for _, f := range x.ForbiddenFunctionCalls {
		for i, a := range calls {
			if a.Name != f.FunctionName {
				continue
			}
			if len(f.ArgumentsContain) > 0 && len(containFailures(f.ArgumentsContain, a.Args)) > 0 {
				continue
			}
			how := "ran"
			if a.Blocked {
				how = "was attempted (blocked"
				if a.Error != nil {
					how += ": " + string(a.Error.Code)
				}
				how += ")"
			}
			note(i, fmt.Sprintf("Call %d %s: forbidden call %s", i+1, a.Name, how))
		}
	}
	for _, phrase := range x.BodyNotContains {
		for i, a := range calls {
			if a.Name != dispatcher.FuncSendEmail {
				continue
			}
			if body, _ := a.Args["body"].(string); containsFold(body, phrase) {
				note(i, fmt.Sprintf("Call %d send_email: Body contains forbidden phrase '%s'", i+1, phrase))
			}
		}
	}
	if x.ProcessingTimeMS > 0 && o.DurationMS > x.ProcessingTimeMS {
		fail("Processing time: expected at most %d ms, took %d ms", x.ProcessingTimeMS, o.DurationMS)
	}
	return v
}

type failFunc func(format string, a ...any)

func countMismatch(exp []ExpectedCall, act []dispatcher.Record, fail failFunc) {
	fail("Function call count mismatch: expected %d, got %d", len(exp), len(act))
	fail("  Expected: %s", expectedNames(exp))
	fail("  Actual: %s", actualNames(act))
}

func matchExact(exp []ExpectedCall, act []dispatcher.Record, fail failFunc, note func(int, string)) {
	if len(exp) != len(act) {
		countMismatch(exp, act, fail)
		return
	}
	for i := range exp {
		for _, m := range callFailures(exp[i], act[i]) {
			note(i, fmt.Sprintf("Call %d %s", i+1, m))
		}
	}
}

// matchInOrder finds the expected calls as a subsequence of the actual ones
// (earliest match first, which finds one whenever one exists).
func matchInOrder(exp []ExpectedCall, act []dispatcher.Record, fail failFunc) {
	j := 0
	for i, e := range exp {
		found := false
		for ; j < len(act); j++ {
			if len(callFailures(e, act[j])) == 0 {
				found = true
				j++
				break
			}
		}
		if !found {
			fail("Expected call %d %s not found in order%s", i+1, e.FunctionName, closest(e, act, "is out of order"))
			fail("  Expected: %s", expectedNames(exp))
			fail("  Actual: %s", actualNames(act))
			return
		}
	}
}

// matchUnordered pairs every expected call with a distinct actual call
// (bipartite matching), in any order.
func matchUnordered(exp []ExpectedCall, act []dispatcher.Record, fail failFunc) {
	ok := make([][]bool, len(exp))
	for i, e := range exp {
		ok[i] = make([]bool, len(act))
		for j, a := range act {
			ok[i][j] = len(callFailures(e, a)) == 0
		}
	}
	owner := make([]int, len(act))
	for j := range owner {
		owner[j] = -1
	}
	var try func(i int, seen []bool) bool
	try = func(i int, seen []bool) bool {
		for j := range act {
			if !ok[i][j] || seen[j] {
				continue
			}
			seen[j] = true
			if owner[j] < 0 || try(owner[j], seen) {
				owner[j] = i
				return true
			}
		}
		return false
	}
	for i, e := range exp {
		if !try(i, make([]bool, len(act))) {
			fail("Expected call %d %s not matched by any call%s", i+1, e.FunctionName, closest(e, act, "is paired with another expected call"))
		}
	}
}

// closest explains why the nearest actual call of the same name failed;
// taken says why a call that matches on its own was not used.
func closest(e ExpectedCall, act []dispatcher.Record, taken string) string {
	best, bestN := -1, 0
	var bestMsgs []string
	for j, a := range act {
		if a.Name != e.FunctionName {
			continue
		}
		msgs := callFailures(e, a)
		if best < 0 || len(msgs) < bestN {
			best, bestN, bestMsgs = j, len(msgs), msgs
		}
	}
	if best < 0 {
		return fmt.Sprintf(" (no %s call was made)", e.FunctionName)
	}
	if len(bestMsgs) == 0 {
		return fmt.Sprintf(" (call %d %s matches but %s)", best+1, e.FunctionName, taken)
	}
	return fmt.Sprintf(" (closest: call %d %s)", best+1, strings.Join(bestMsgs, "; "))
}

// callFailures compares one expected call with one actual call; the
// messages start with the function name (the caller adds "Call N").
func callFailures(e ExpectedCall, a dispatcher.Record) []string {
	if e.FunctionName != a.Name {
		return []string{fmt.Sprintf("%s: Expected %s, got %s", a.Name, e.FunctionName, a.Name)}
	}
	var out []string
	add := func(format string, x ...any) { out = append(out, a.Name+": "+fmt.Sprintf(format, x...)) }
	switch {
	case a.Blocked && !e.Blocked:
		add("Blocked by the dispatcher (%s)", errText(a.Error))
	case !a.Blocked && e.Blocked:
		add("Expected the dispatcher to block this call, but it ran")
	}
	for _, k := range slices.Sorted(maps.Keys(e.Arguments)) {
		got, present := a.Args[k]
		switch {
		case !present:
			add("Missing argument '%s'", k)
		case !equalValues(e.Arguments[k], got):
			add("Argument '%s' expected %s, got %s", k, show(e.Arguments[k]), show(got))
		}
	}
	for _, m := range containFailures(e.ArgumentsContain, a.Args) {
		add("%s", m)
	}
	if len(e.ResultContains) > 0 {
		if !a.OK {
			add("Call failed (%s), result expected to contain %s", errText(a.Error), show(e.ResultContains))
		} else {
			for _, k := range slices.Sorted(maps.Keys(e.ResultContains)) {
				got, present := a.Result[k]
				switch {
				case !present:
					add("Result missing '%s'", k)
				case !subsetEqual(e.ResultContains[k], got):
					add("Result '%s' expected %s, got %s", k, show(e.ResultContains[k]), show(got))
				}
			}
		}
	}
	body, _ := a.Args["body"].(string)
	for _, p := range e.BodyContains {
		if !containsFold(body, p) {
			add("Body missing phrase '%s'", p)
		}
	}
	for _, p := range e.BodyNotContains {
		if containsFold(body, p) {
			add("Body contains forbidden phrase '%s'", p)
		}
	}
	return out
}

// containFailures applies arguments_contain: strings are case-insensitive
// substrings, maps recurse key by key, lists need every expected element
// contained in some actual element, other values must be equal.
func containFailures(want map[string]any, got map[string]any) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		g, present := got[k]
		switch {
		case !present:
			out = append(out, fmt.Sprintf("Missing argument '%s'", k))
		case !contains(g, want[k]):
			out = append(out, fmt.Sprintf("Argument '%s' expected to contain %s, got %s", k, show(want[k]), show(g)))
		}
	}
	return out
}

func contains(got, want any) bool {
	switch w := want.(type) {
	case string:
		if g, ok := got.(string); ok {
			return containsFold(g, w)
		}
		return containsFold(show(got), w)
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, present := g[k]
			if !present || !contains(gv, wv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return false
		}
		for _, wv := range w {
			found := false
			for _, gv := range g {
				if contains(gv, wv) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return equalValues(want, got)
}

// subsetEqual is result_contains: maps are compared key by key (extra
// actual keys allowed), everything else must be equal.
func subsetEqual(want, got any) bool {
	if w, ok := want.(map[string]any); ok {
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, present := g[k]
			if !present || !subsetEqual(wv, gv) {
				return false
			}
		}
		return true
	}
	return equalValues(want, got)
}

// containsFold is a case-insensitive substring test that also ignores
// differences in whitespace.
func containsFold(s, sub string) bool {
	return strings.Contains(squash(strings.ToLower(s)), squash(strings.ToLower(sub)))
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// equalValues compares values after a JSON round trip, so YAML ints and
// JSON float64s compare equal.
func equalValues(a, b any) bool {
	return reflect.DeepEqual(jsonValue(a), jsonValue(b))
}

func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

// jsonMap normalizes a decoded YAML map to JSON values (nil stays nil).
func jsonMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	if out, ok := jsonValue(m).(map[string]any); ok {
		return out
	}
	return m
}

func show(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func errText(e *agent.ToolError) string {
	if e == nil {
		return "no error"
	}
	return string(e.Code) + ": " + e.Message
}

func expectedNames(exp []ExpectedCall) string {
	names := make([]string, len(exp))
	for i, e := range exp {
		names[i] = e.FunctionName
		if e.Blocked {
			names[i] += " (blocked)"
		}
	}
	return "[" + strings.Join(names, ", ") + "]"
}

func actualNames(act []dispatcher.Record) string {
	names := make([]string, len(act))
	for i, a := range act {
		names[i] = a.Name
		if a.Blocked {
			names[i] += " (blocked)"
		}
	}
	return "[" + strings.Join(names, ", ") + "]"
}
