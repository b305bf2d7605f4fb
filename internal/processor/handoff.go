package processor

import (
	"context"
	"fmt"
	"strings"

	"triage"
	"triage/internal/clients/tickets"
	"triage/internal/dispatcher"
)

// StaffNotifier sends staff the short second notice of a hand-off whose
// reply to the customer did not go out (dispatcher.Notifier).
type StaffNotifier interface {
	Unacknowledged(ctx context.Context, u dispatcher.Unacknowledged) error
}

var _ StaffNotifier = (*dispatcher.Notifier)(nil)

// handedOff records what became of a hand-off once the email's outcome is
// known: staff were told (notified: notify_staff succeeded), and the notice could
// only say what triage was about to do. The ticket gets a note with what
// happened; when the reply to the customer did not go out, staff get a
// second notice saying so.
func (p *Processor) handedOff(ctx context.Context, out *Outcome, notified bool) {
	if p.cfg.DryRun || !notified {
		return
	}
	ctx = context.WithoutCancel(ctx)
	sc := p.cfg.Scenarios.Get(out.Scenario)
	escalates := sc != nil && sc.Escalate
	staff := p.cfg.Dispatcher.Staff()
	told := "Staff (" + strings.Join(staff, ", ") + ") were sent a notice about this email."
	var text string
	switch {
	case out.Status.Answered() && out.Reply != nil:
		text = told + " " + replied(out)
		switch {
		case out.Escalated:
			text += " The conversation is taken over by staff: triage no longer answers it."
		case escalates:
			text += " The conversation could not be taken over (" + out.Detail + "): triage may answer the customer's next email."
		default:
			text += " triage keeps answering the conversation until a person takes it over."
		}
	case out.Status.Answered():
		text = told + " triage's reply to the customer went out."
	default:
		why := string(out.Reason)
		if out.Detail != "" {
			why += ": " + out.Detail
		}
		text = told + " triage's reply to the customer did not go out (" + why + "): nobody has answered the customer, and the conversation was not taken over."
		if p.cfg.Staff != nil {
			err := p.cfg.Staff.Unacknowledged(ctx, dispatcher.Unacknowledged{
				Key: out.Key, InboundFrom: out.From, TicketID: out.TicketID, Staff: staff, Escalates: escalates, Why: why, Now: p.cfg.Now(),
			})
			if err != nil {
				p.cfg.Logger.ErrorContext(ctx, "staff were not told that the customer was not answered", "ticket", out.TicketID, "err", err)
				text += " Telling staff so failed: " + err.Error()
			} else {
				text += " Staff were sent a second notice saying so."
				out.Detail = strings.TrimPrefix(out.Detail+"; staff were told that the customer was not answered", "; ")
			}
		}
	}
	if out.TicketID == "" || p.cfg.Tickets == nil {
		return
	}
	if err := p.noteTicket(ctx, out, "handoff", "Handed to staff", text); err != nil {
		p.cfg.Logger.ErrorContext(ctx, "could not note the hand-off on its ticket", "ticket", out.TicketID, "err", err)
	}
}

// replied says where the reply of an answered outcome went.
func replied(out *Outcome) string {
	r := out.Reply
	if out.Status == triage.StatusDrafted {
		return fmt.Sprintf("triage's reply to the customer was left as a draft (%s) for a person to send; it has not gone out.", r.MessageID)
	}
	return fmt.Sprintf("triage's reply went to %s (%s).", r.To, r.MessageID)
}

// noteTicket adds triage's own note (NoteAuthor) to the outcome's ticket.
// Its Message-ID comes from the email's key and tag, so the same note is
// never added twice.
func (p *Processor) noteTicket(ctx context.Context, out *Outcome, tag, subject, text string) error {
	_, err := p.cfg.Tickets.AddNote(ctx, out.TicketID, tickets.Note{
		MessageID: "<" + string(out.Key) + "." + tag + "@triage.invalid>",
		From:      NoteAuthor,
		Subject:   subject,
		Text:      text,
		At:        p.cfg.Now(),
	})
	return err
}
