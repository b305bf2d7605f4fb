// The Verdict: what the calls of one email came to, as the pipeline reads
// it.

package dispatcher

import (
	"triage"
	"triage/internal/agent"
	"triage/internal/decision"
)

// Verdict is what a session's calls came to: whether the scenario's final
// function (send_email) succeeded and what it sent, whether staff were
// told, and, when the reply did not go out, what stopped it.
type Verdict struct {
	// Final is the scenario's final function ("" when it declares none).
	Final string
	// Sent: a call of Final succeeded (ran, repeated an earlier one, or was
	// answered in a dry run). Reply and DryRun describe the first one.
	Sent bool
	// DryRun: that call was answered without running (Options.DryRun).
	DryRun bool
	// Reply is the reply that call sent or drafted, by its receipt; in a
	// dry run the reply its arguments asked for (Intended), and for a final
	// function that gives no receipt (an http or mcp binding) only the
	// subject they asked for. Nil unless Sent.
	Reply *triage.Receipt
	// Refused is why the reply cannot go out for this message when no call
	// of Final succeeded: the first call of it refused for a reason no later
	// call can overcome (a reply limit, a reply that exists for another
	// message; Error.Reason). Nil otherwise.
	Refused *Refusal
	// FinalError is the error of the last call of Final (nil when that call
	// succeeded, or Final was never called).
	FinalError *agent.ToolError
	// Notified: a call of notify_staff succeeded (staff were told, or in a
	// dry run would have been).
	Notified bool
	// NoticeRefused is the refusal of the last notify_staff call when a
	// notice bound refused it (triage.ReasonNoticeLimit,
	// triage.ReasonNoticeGlobalLimit); nil otherwise.
	NoticeRefused *Refusal
	// Blocked counts the calls refused (Record.Blocked).
	Blocked int
	// SerialFromAttachment: a from: serials_or_attachments argument held a
	// serial the model read from an attachment (Record.SerialSource).
	SerialFromAttachment bool
	// SendFailure is the last failed delivery (Session.SendFailure).
	SendFailure *SendFailure
	// Decision is what the shop owes the claim: the decision of the last
	// successful call that reached one (check_warranty); nil when none did.
	Decision *decision.Decision
	// Commitments are what the sent reply promised (its commitments
	// argument, [none] when it gave none), where the final function checks
	// them (tools.yaml commitments); nil otherwise.
	Commitments []decision.Commitment
	// Verification is the verifier's reading of the sent reply, else of
	// the last reply it read; nil when it read none (Config.Verifier).
	Verification *decision.Verification
}

// Refusal is a refused call's reason for leaving the email to a person, and
// the message the model was given.
type Refusal struct {
	Reason  triage.Reason
	Message string
}

// Verdict is what the session's calls have come to so far.
func (s *Session) Verdict() Verdict {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := Verdict{SendFailure: s.sendFail}
	if s.sc != nil {
		v.Final = s.d.tools.FinalOf(s.sc)
	}
	var refused *Record // the first call of Final refused with a reason
	for i := range s.records {
		r := &s.records[i]
		if r.Blocked {
			v.Blocked++
		}
		if r.OK && r.Decision != nil {
			v.Decision = r.Decision
		}
		if r.SerialSource == SerialSourceAttachment {
			v.SerialFromAttachment = true
		}
		if r.Name == v.Final && v.Final != "" {
			if r.Verification != nil && !v.Sent {
				v.Verification = r.Verification
			}
			if r.OK && !v.Sent {
				v.Sent, v.DryRun, v.Reply = true, r.DryRun, replyOf(r)
				v.Commitments = s.acceptedCommitments(r)
			}
			if refused == nil && r.Reason != "" && r.Error != nil {
				refused = r
			}
			v.FinalError = r.Error
		}
		if r.Name == FuncNotifyStaff {
			v.Notified = v.Notified || r.OK
			v.NoticeRefused = nil
			if r.Reason != "" && r.Error != nil {
				v.NoticeRefused = &Refusal{Reason: r.Reason, Message: r.Error.Message}
			}
		}
	}
	if refused != nil && !v.Sent {
		v.Refused = &Refusal{Reason: refused.Reason, Message: refused.Error.Message}
	}
	return v
}

// replyOf is the reply a successful call of the final function stands for.
func replyOf(r *Record) *triage.Receipt {
	var rc triage.Receipt
	switch {
	case r.DryRun: // nothing went anywhere: the reply that would have gone out
		rc = Intended(r.Args)
	case r.Receipt != nil:
		// The receipt says where the mail went; the model's argument may
		// differ in form (a display name, letter case).
		rc = *r.Receipt
	default:
		rc = triage.Receipt{Subject: Intended(r.Args).Subject}
	}
	return &rc
}
