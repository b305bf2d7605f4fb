// Commitments: a reply promises no more than the email's decision allows.

package dispatcher

import (
	"fmt"
	"slices"
	"strings"

	"triage"
	"triage/internal/agent"
	"triage/internal/decision"
	"triage/internal/instructions"
)

// Error codes of a reply refused for what it promises (tools.yaml
// commitments); the email fails with triage.ReasonCommitmentNotAllowed when
// the model does not correct it.
const (
	// CodeCommitmentNotAllowed: the reply promises something the email's
	// decision does not allow (a remedy it does not offer, a ticket the
	// email does not have, none beside another commitment).
	CodeCommitmentNotAllowed = agent.ErrorCode(triage.ReasonCommitmentNotAllowed)
	// CodeDecisionMismatch: the reply names another basis than the one
	// triage computed (or one where none was computed).
	CodeDecisionMismatch agent.ErrorCode = "decision_mismatch"
	// CodeDecisionMissing: a reply to a complaint names no decision though
	// one was computed.
	CodeDecisionMissing agent.ErrorCode = "decision_missing"
)

// Overpromised reports whether code refused a reply for what it promises.
func Overpromised(code agent.ErrorCode) bool {
	return code == CodeCommitmentNotAllowed || code == CodeDecisionMismatch || code == CodeDecisionMissing
}

// MaxCommitmentRefusals is how many replies are refused for their
// commitments before every later one is refused unchecked: the model gets
// one chance to correct its reply, then the email is left for a person.
const MaxCommitmentRefusals = 2

// checksCommitments reports whether a call of t is checked for its
// commitments: the binding declares them and the scenario's function
// declares the commitments parameter.
func (s *Session) checksCommitments(t *instructions.Tool) bool {
	if t.Commitments == nil || s.sc == nil {
		return false
	}
	fn := s.sc.Function(t.Name)
	return fn != nil && instructions.Declares(fn, instructions.CommitmentsParam)
}

// decided is the email's decision so far: the last one a successful call
// reached (nil when none did), as the Verdict reports it.
func (s *Session) decided() *decision.Decision {
	var d *decision.Decision
	for i := range s.done {
		if s.done[i].result.Decision != nil {
			d = s.done[i].result.Decision
		}
	}
	return d
}

// hasTicket reports whether the email has a ticket a reply may name: the
// conversation's, or one a call of this email opened (a dry run's
// placeholder included).
func (s *Session) hasTicket() bool {
	if s.ticket != "" {
		return true
	}
	for i := range s.done {
		if id, _ := s.done[i].result.Value["ticket_id"].(string); id != "" {
			return true
		}
	}
	return false
}

// declaredCommitments reads the commitments argument (absent: none).
func declaredCommitments(args map[string]any) []decision.Commitment {
	v, ok := args[instructions.CommitmentsParam].([]any)
	if !ok || len(v) == 0 {
		return []decision.Commitment{decision.NoCommitment}
	}
	out := make([]decision.Commitment, 0, len(v))
	for _, x := range v {
		if c, ok := x.(string); ok {
			out = append(out, decision.Commitment(c))
		}
	}
	return out
}

// commit checks a reply's declared decision and commitments (and, with a
// lexicon, its text) against the email's decision, and refuses it saying
// what exceeds it.
func (s *Session) commit(t *instructions.Tool, args map[string]any) error {
	if s.overpromised >= MaxCommitmentRefusals {
		return &Error{Code: CodeCommitmentNotAllowed, Refused: true, Message: fmt.Sprintf(
			"the reply was refused %d times for what it promises: the email is left for a person; do not call %s again",
			s.overpromised, t.Name)}
	}
	code, msg := s.overpromise(t, args)
	if code == "" {
		return nil
	}
	s.overpromised++
	if s.overpromised < MaxCommitmentRefusals {
		msg += fmt.Sprintf("; promise only what the decision allows (or say a consultant will confirm), and call %s again", t.Name)
	} else {
		msg += fmt.Sprintf("; the email is left for a person: do not call %s again", t.Name)
	}
	return &Error{Code: code, Message: msg, Refused: true}
}

// overpromise is the first rule the reply breaks, as a code and a message
// ("" when it breaks none).
func (s *Session) overpromise(t *instructions.Tool, args map[string]any) (agent.ErrorCode, string) {
	d := s.decided()
	basis, _ := args[instructions.DecisionParam].(string)
	switch {
	case basis != "" && d == nil:
		return CodeDecisionMismatch, fmt.Sprintf("the reply is written on decision %s, but no decision was reached for this email: leave decision out", basis)
	case basis != "" && decision.Basis(basis) != d.Basis:
		return CodeDecisionMismatch, fmt.Sprintf("the reply is written on decision %s, but the decision for this email is %s (check_warranty's decision.basis)", basis, d.Basis)
	case basis == "" && d != nil && s.complaint():
		return CodeDecisionMissing, fmt.Sprintf("this email is a complaint and its decision is %s: the reply must state it (decision: %s) and answer on it", d.Basis, d.Basis)
	}
	cs := declaredCommitments(args)
	if bad := decision.Allows(d, cs, s.hasTicket()); len(bad) > 0 {
		parts := make([]string, len(bad))
		for i, b := range bad {
			parts[i] = b.String()
		}
		return CodeCommitmentNotAllowed, "the reply commits to " + strings.Join(parts, ", ")
	}
	return s.worded(d, cs, args)
}

// BodyParam is the argument of a reply whose words the lexicon reads.
const BodyParam = "body"

// worded reads the reply's body with the lexicon (commitments.yaml): its
// first phrase that promises a commitment the reply does not declare, or
// states a status d's basis does not allow, refuses it as
// commitment_not_allowed, naming the phrase and what d allows.
func (s *Session) worded(d *decision.Decision, declared []decision.Commitment, args map[string]any) (agent.ErrorCode, string) {
	body, _ := args[BodyParam].(string)
	for _, h := range s.d.lex.Find(body) {
		switch {
		case h.Commitment != "" && !slices.Contains(declared, h.Commitment):
			return CodeCommitmentNotAllowed, fmt.Sprintf("the reply's words %q promise %s, which its commitments (%s) do not declare; the decision allows %s: declare it if the decision allows it, else reword",
				h.Phrase, h.Commitment, joinCommitments(declared), s.allowed(d))
		case h.Status != "" && (d == nil || !slices.Contains(h.Bases, d.Basis)):
			basis := "no decision was reached"
			if d != nil {
				basis = "the decision is " + string(d.Basis)
			}
			return CodeCommitmentNotAllowed, fmt.Sprintf("the reply's words %q state %s, which only a decision on %s allows, and %s; the decision allows %s: reword",
				h.Phrase, h.Status, joinBases(h.Bases), basis, s.allowed(d))
		}
	}
	return "", ""
}

// allowed lists the commitments d allows a reply of this email, each alone.
func (s *Session) allowed(d *decision.Decision) string {
	var ok []decision.Commitment
	for _, c := range decision.Known {
		if len(decision.Allows(d, []decision.Commitment{c}, s.hasTicket())) == 0 {
			ok = append(ok, c)
		}
	}
	return joinCommitments(ok)
}

func joinCommitments(cs []decision.Commitment) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

func joinBases(bs []decision.Basis) string {
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = string(b)
	}
	return strings.Join(s, " or ")
}

// complaint reports whether the email is a consumer complaint: the caller
// says so (Options.Complaint), or the scenario declares it one.
func (s *Session) complaint() bool {
	return s.opts.Complaint || s.sc.IsComplaint(len(s.index().serials) > 0)
}

// acceptedCommitments are the commitments of a successful call of a final
// function that checks them (nil otherwise).
func (s *Session) acceptedCommitments(r *Record) []decision.Commitment {
	if t := s.d.tools.Get(r.Name); t == nil || !s.checksCommitments(t) {
		return nil
	}
	return declaredCommitments(r.Args)
}
