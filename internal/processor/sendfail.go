package processor

import (
	"context"

	"triage"
	"triage/internal/dispatcher"
)

// NoteAuthor is the From of the notes triage itself adds to a ticket (a
// reply that could not be sent); they never count as the customer's
// messages.
const NoteAuthor = dispatcher.NoteAuthor

// sendFailed ends an email whose reply the mail server refused or could not
// take: failed/send_failed with the server's code and text, an ERROR line,
// and a note on the email's ticket so that it does not look handled; none
// yet when the failure is temporary and the caller tries again (retried:
// Input.MoreAttempts), so the note is added once, by the last attempt.
func (p *Processor) sendFailed(ctx context.Context, out *Outcome, f *dispatcher.SendFailure, retried bool) {
	out.Status, out.Reason, out.Detail = triage.StatusFailed, triage.ReasonSendFailed, f.Detail()
	out.SendFailure = f
	retried = retried && f.Temporary
	p.cfg.Logger.ErrorContext(ctx, "reply not sent: the mail server refused or could not take it",
		"function", f.Function, "smtp_step", f.Op, "smtp_code", f.Code, "smtp_text", f.Text,
		"temporary", f.Temporary, "tried_again", retried, "ticket", out.TicketID)
	if out.TicketID == "" || p.cfg.Tickets == nil || p.cfg.DryRun || retried {
		return
	}
	err := p.noteTicket(context.WithoutCancel(ctx), out, "send-failed", "Reply not sent",
		"triage could not send its reply to this email, so the customer has not been answered: "+f.Detail()+". The email is left for a person.")
	if err != nil {
		p.cfg.Logger.ErrorContext(ctx, "could not note the failed reply on its ticket", "ticket", out.TicketID, "err", err)
		out.Detail += "; the ticket could not be noted: " + err.Error()
	}
}
