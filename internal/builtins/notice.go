package builtins

import (
	"context"
	"strings"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/dispatcher"
	"triage/internal/message"
)

// NotifyStaffArgs are notify_staff's arguments: it has no recipient, it
// mails the configured staff addresses.
type NotifyStaffArgs struct {
	Subject string `json:"subject"`
	Body    string `json:"body"`
}

// Notified is notify_staff's result.
type Notified struct {
	Notified   []string `json:"notified"`
	MessageIDs []string `json:"message_ids"`
}

// NotifyStaff mails every staff address (Call.Staff) a StaffNotice: one
// message each, never to the customer, with a Message-ID derived from the
// inbound key and the address (so a retried email reuses it). It is not a
// reply: its ledger key differs from the customer reply's.
func NotifyStaff(s mail.Sender, from, domain string) Handler[NotifyStaffArgs, Notified] {
	return func(ctx context.Context, call *dispatcher.Call, in NotifyStaffArgs) (Notified, error) {
		if len(call.Staff) == 0 {
			return Notified{}, &dispatcher.Error{Code: dispatcher.CodeNoStaff, Message: "no staff address is configured; the email is left for a person", Refused: true}
		}
		if err := dispatcher.PlainBody(in.Body, call.MaxBodyBytes); err != nil {
			return Notified{}, err
		}
		subject, body := StaffNotice(in.Subject, in.Body, call.Msg, call.TicketID)
		var out Notified
		for _, to := range call.Staff {
			var key triage.Key
			if call.Key != "" {
				key = call.Key + triage.Key("|staff|"+to)
			}
			r := &mail.Reply{From: from, To: to, Subject: subject, Body: body, Date: call.Now, Key: key}
			if key != "" {
				r.MessageID = mail.MessageIDFor(key, domain)
			}
			rc, err := s.Send(ctx, r)
			if err != nil {
				return Notified{}, err
			}
			out.Notified, out.MessageIDs = append(out.Notified, to), append(out.MessageIDs, rc.MessageID)
		}
		return out, nil
	}
}

// StaffNotice composes the notice staff receive: the model's subject with
// the ticket's tag, and before the model's text, the facts triage checked
// (the customer, the inbound Message-ID, the ticket).
func StaffNotice(subject, body string, msg *message.Message, ticketID string) (string, string) {
	subject = tickets.WithTag(strings.TrimSpace(subject), ticketID)
	var facts []string
	if msg != nil {
		facts = append(facts, "Customer: "+msg.From.Address)
		if rt := msg.ReplyTo; rt != "" && !strings.EqualFold(rt, msg.From.Address) {
			// From is only a claim: staff see that the customer's
			// acknowledgement went elsewhere.
			facts = append(facts, "Reply-To (our acknowledgement went there): "+rt)
		}
		facts = append(facts, "Customer subject: "+msg.Subject, "Message-ID: "+msg.MessageID)
	}
	if ticketID != "" {
		facts = append(facts, "Ticket: "+ticketID+" (taken over for a person: triage no longer answers this conversation)")
	}
	if len(facts) == 0 {
		return subject, body
	}
	// The facts come first: the body is the model's, written from the
	// customer's email, and may carry a forged "-- \nCustomer:" block;
	// behind a signature separator of our own, the real facts were the part
	// mail clients fold away.
	return subject, "Escalated by triage. Checked by triage:\n" + strings.Join(facts, "\n") +
		"\n\nThe assistant's note (written from the customer's email, not checked):\n\n" + strings.TrimRight(body, "\n") + "\n"
}
