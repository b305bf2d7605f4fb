// The verifier: a second model reads a reply against its trusted sources
// before it leaves, after every other check passed.

package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"triage"
	"triage/internal/agent"
	"triage/internal/decision"
	"triage/internal/instructions"
	"triage/internal/trace"
)

// Verifier reads a reply against the decision, the commitments and the
// function results of its email and lists the statements they do not
// support (model.Verifier). It is a model: what it lists is checked
// (decision.Settle), and an error keeps the reply from going out.
type Verifier interface {
	// Name is the verifier's model id, as outcomes record it.
	Name() string
	Verify(ctx context.Context, r decision.VerifyRequest) ([]decision.Statement, error)
}

// DefaultVerifyTimeout bounds one verifier call (Config.VerifyTimeout).
const DefaultVerifyTimeout = 30 * time.Second

// CodeVerifierUnavailable refuses a reply the verifier could not read: it
// is not sent unverified, the model loop ends, and the email is left for a
// person (triage.ReasonVerifierUnavailable).
const CodeVerifierUnavailable = agent.ErrorCode(triage.ReasonVerifierUnavailable)

// verifies reports whether a call of t is read by the verifier: a reply
// (the send_email builtin, drafts included) when one is configured.
func (s *Session) verifies(t *instructions.Tool) bool {
	return s.d.verifier != nil && t.Builtin == FuncSendEmail
}

// verify asks the verifier about the reply in args, once, within the
// timeout, and records its reading in rec. A statement it flags, quoted
// from the reply, refuses the reply as ungrounded_claim (the grounding
// check's code and count: the model may rewrite once); a statement it
// quotes wrongly is ignored; an error refuses the reply for good.
func (s *Session) verify(ctx context.Context, t *instructions.Tool, args map[string]any, rec *Record) error {
	body, _ := args[BodyParam].(string)
	req := decision.VerifyRequest{
		Reply:       decision.ReplyText(body),
		Commitments: declaredCommitments(args),
		Decision:    s.decided(),
	}
	if b, ok := args[instructions.DecisionParam].(string); ok {
		req.Basis = decision.Basis(b)
	}
	for _, c := range s.done {
		if j, err := json.Marshal(map[string]any{c.name: c.result.Value}); err == nil {
			req.Results = append(req.Results, string(j))
		}
	}
	if s.sc != nil {
		req.Instructions = s.sc.Body
	}
	if m := s.msg; m != nil {
		req.Customer = m.Subject + "\n\n" + m.Text
	}
	name := s.d.verifier.Name()
	vctx, span := trace.Verify(ctx, name)
	vctx, cancel := context.WithTimeoutCause(vctx, s.d.verifyTimeout, errVerifyTimeout)
	listed, err := s.d.verifier.Verify(vctx, req)
	if err != nil && context.Cause(vctx) == errVerifyTimeout {
		err = fmt.Errorf("%w (%s)", errVerifyTimeout, s.d.verifyTimeout)
	}
	cancel()
	var v decision.Verification
	if err != nil {
		v = decision.Failed(name, err)
	} else {
		v = decision.Settle(name, req.Reply, listed)
	}
	rec.Verification = &v
	trace.EndVerify(span, string(v.Verdict), len(v.Flagged), len(v.Ignored), v.Error, v.Flagged)
	s.d.log.InfoContext(ctx, "dispatcher: verifier", "model", name, "verdict", v.Verdict, "flagged", len(v.Flagged), "ignored", len(v.Ignored))
	switch v.Verdict {
	case decision.VerifyError:
		reason := triage.ReasonVerifierUnavailable
		s.halt = errors.New("dispatcher: " + t.Name + ": the verifier could not read the reply: " + v.Error)
		return &Error{Code: CodeVerifierUnavailable, Refused: true, Reason: reason, Halt: true, Message: fmt.Sprintf(
			"the reply could not be verified (%s): it is not sent unverified, and the email is left for a person; do not call %s again", v.Error, t.Name)}
	case decision.VerifyFlagged:
		s.ungrounded++
		parts := make([]string, len(v.Flagged))
		for i, st := range v.Flagged {
			parts[i] = st.String()
		}
		msg := "a check of the reply against the decision, its commitments and the function results of this email found statements they do not support: " + strings.Join(parts, "; ")
		if s.ungrounded < MaxGroundingRefusals {
			msg += fmt.Sprintf("; state only what they support (or say a consultant will confirm), and call %s again", t.Name)
		} else {
			msg += fmt.Sprintf("; the email is left for a person: do not call %s again", t.Name)
		}
		return &Error{Code: CodeUngroundedClaim, Message: msg, Refused: true}
	}
	return nil
}

// errVerifyTimeout is the cause of a verifier call that outlived
// Config.VerifyTimeout.
var errVerifyTimeout = errors.New("verifier: no answer in time")
