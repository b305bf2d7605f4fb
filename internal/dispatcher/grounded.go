package dispatcher

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"triage"
	"triage/internal/agent"
	"triage/internal/grounding"
	"triage/internal/instructions"
)

// CodeUngroundedClaim refuses a grounded tool's call that states a fact
// nothing this email gave the model backs (tools.yaml grounded: true); the
// email fails with the reason of the same name.
const CodeUngroundedClaim = agent.ErrorCode(triage.ReasonUngroundedClaim)

// MaxGroundingRefusals is how many calls of a grounded tool are refused for
// unsupported claims before every later call is refused unchecked: the model
// gets one chance to correct its reply, then the email is left for a person.
const MaxGroundingRefusals = 2

// ground checks the string arguments of a grounded tool's call (those no
// from: policy vouched for) against what this email gave the model, and
// refuses the call naming every claim nothing backs.
func (s *Session) ground(t *instructions.Tool, args map[string]any) error {
	if s.ungrounded >= MaxGroundingRefusals {
		return &Error{Code: CodeUngroundedClaim, Refused: true, Message: fmt.Sprintf(
			"the reply was refused %d times for facts nothing backs: the email is left for a person; do not call %s again",
			s.ungrounded, t.Name)}
	}
	src := s.groundingSources()
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(args)) {
		v, ok := args[k].(string)
		if !ok || (t.Args[k] != nil && t.Args[k].From != "") {
			continue
		}
		for _, c := range src.Unsupported(v) {
			bad = append(bad, c.String())
		}
	}
	if len(bad) == 0 {
		return nil
	}
	s.ungrounded++
	msg := fmt.Sprintf("the reply states %s, which neither the case facts, the instructions nor a function result of this email contains "+
		"(the customer's own words back only what the reply quotes as theirs, e.g. you wrote: \"...\")",
		strings.Join(bad, ", "))
	if s.ungrounded < MaxGroundingRefusals {
		msg += fmt.Sprintf("; state only facts you were given (or say a consultant will confirm), and call %s again", t.Name)
	} else {
		msg += fmt.Sprintf("; the email is left for a person: do not call %s again", t.Name)
	}
	return &Error{Code: CodeUngroundedClaim, Message: msg, Refused: true}
}

// groundingSources collects what a grounded reply may state: the texts the
// shop controls that the model was given (Options.Sources: the
// instructions and the trusted facts of the user turn), the message's
// addresses and date, the scenario's instructions, the email's ticket,
// the customer's language (the country codes it tells) and every
// successful function result of this email. The customer's own words (the
// message's subject, text and quoted history, Options.CustomerTexts) back
// only what the reply quotes as theirs.
func (s *Session) groundingSources() *grounding.Sources {
	var src grounding.Sources
	for _, t := range s.opts.Sources {
		src.AddText(t)
	}
	for _, t := range s.opts.CustomerTexts {
		src.AddCustomerText(t)
	}
	if m := s.msg; m != nil {
		for _, t := range []string{m.Subject, m.Text, m.Quoted} {
			src.AddCustomerText(t)
		}
		for _, t := range []string{m.From.Address, m.ReplyTo} {
			src.AddText(t)
		}
		if !m.Date.IsZero() {
			src.AddText(m.Date.Format("2006-01-02"))
		}
	}
	if s.sc != nil {
		src.AddText(s.sc.Body)
	}
	src.AddText(s.ticket)
	src.AddLanguage(s.opts.Language)
	for _, c := range s.done {
		src.AddValue(c.result.Value)
	}
	return &src
}
