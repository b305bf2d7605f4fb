// notify_staff, the builtin that mails staff a notice of the case, and
// the second notice of a hand-off whose reply did not go out.

package dispatcher

import (
	"context"
	"errors"
	netmail "net/mail"
	"slices"
	"strings"
	"time"

	"triage"
	"triage/internal/agent"
	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/clip"
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

// Case is where a staff notice reads the case beyond the email itself: the
// ticket with its history, and the text of what triage already told the
// customer. cmd/triage implements it over the ticket store and the reply
// history (the ledger in watch, the outbox in process).
type Case interface {
	// Ticket returns the ticket's state (tickets.ErrNotFound when none).
	Ticket(ctx context.Context, ticketID string) (*tickets.State, error)
	// Reply returns the raw message of one of triage's replies or drafts by
	// its Message-ID; ok is false when triage wrote none by that ID (a
	// person's reply in the thread).
	Reply(ctx context.Context, messageID string) (raw []byte, ok bool, err error)
}

// Notices configures the staff notices.
type Notices struct {
	// Case reads the ticket and the earlier replies; nil: the notice carries
	// the email, the checked facts and the model's note only.
	Case Case
	// ConsoleURL is the review console's base URL (console.url); "" gives
	// no link. The link names the conversation by its Key.Ref, never by
	// anything the customer wrote.
	ConsoleURL string
}

// NotifyStaff mails every staff address (Call.Staff) a Notice: one message
// each, never to the customer, with a Message-ID derived from the inbound
// key and the address (so a retried email reuses it), Reply-To the
// customer's reply address (staff answer them directly) and threaded under
// the customer's email. It is not a reply: its ledger key differs from the
// customer reply's, and it is marked mail.Reply.Notice, so it counts under
// the notice bounds, never against the reply limits. A notice over a bound
// is refused with the bound's reason as its code (triage.ReasonNoticeLimit,
// triage.ReasonNoticeGlobalLimit): the email is left for a person.
func NotifyStaff(s mail.Sender, from, domain string, n Notices) Handler[NotifyStaffArgs, Notified] {
	return func(ctx context.Context, call *Call, in NotifyStaffArgs) (Notified, error) {
		if len(call.Staff) == 0 {
			return Notified{}, &Error{Code: CodeNoStaff, Message: "no staff address is configured; the email is left for a person", Refused: true}
		}
		if err := PlainBody(in.Body, call.MaxBodyBytes); err != nil {
			return Notified{}, err
		}
		nt := n.compose(ctx, call, in)
		subject, body := nt.Subject(), nt.Body()
		var out Notified
		// What every notice of this email shares: the customer it is about
		// and the thread it joins.
		var thread mail.Reply
		if m := call.Msg; m != nil {
			thread.InboundFrom = m.From.Address
			thread.ReplyTo = customerAddress(m, call.ReplyTo)
			if id, ok := mail.ValidMsgID(m.MessageID); ok {
				thread.InReplyTo = "<" + id + ">"
			}
			thread.References = mail.ThreadReferences(m.References, m.MessageID)
		}
		for _, to := range call.Staff {
			var key triage.Key
			if call.Key != "" {
				key = staffKey(call.Key, to)
			}
			r := &mail.Reply{From: from, To: to, Subject: subject, Body: body, Date: call.Now, Key: key, Notice: true,
				InboundFrom: thread.InboundFrom, ReplyTo: thread.ReplyTo, InReplyTo: thread.InReplyTo, References: thread.References}
			if key != "" {
				r.MessageID = mail.MessageIDFor(key, domain)
			}
			rc, err := s.Send(ctx, r)
			var lim triage.Limited
			if errors.As(err, &lim) {
				return Notified{}, &Error{Code: agent.ErrorCode(lim.LimitReason()), Refused: true, Reason: lim.LimitReason(),
					Message: "staff notice not sent: " + err.Error() + "; the email is left for a person"}
			}
			if err != nil {
				return Notified{}, err
			}
			out.Notified, out.MessageIDs = append(out.Notified, to), append(out.MessageIDs, rc.MessageID)
		}
		return out, nil
	}
}

// customerAddress is the Reply-To of a staff notice: the address triage
// answers the customer at, replyTo (Call.ReplyTo: their Reply-To when it
// may be answered, else From; "" reads as From), with the customer's
// display name when it is their From; "" when it is no usable address.
func customerAddress(m *message.Message, replyTo string) string {
	replyTo = replyAddress(m, replyTo)
	a, err := netmail.ParseAddress(replyTo)
	if err != nil || a.Name != "" || !strings.EqualFold(a.Address, strings.TrimSpace(replyTo)) {
		return "" // the parser gives bare addresses: anything else is not one
	}
	if name := oneLine(m.From.Name); name != "" && strings.EqualFold(a.Address, m.From.Address) {
		a.Name = name
	}
	return a.String()
}

// replyAddress is replyTo, or when it is "" (a notice outside a session),
// where an unauthenticated message is answered (message.ReplyAddress).
func replyAddress(m *message.Message, replyTo string) string {
	if replyTo != "" {
		return replyTo
	}
	addr, _ := m.ReplyAddress(message.Authentication{})
	return addr
}

// compose gathers what the notice says: the checked facts, the email, the
// ticket and its history, what triage already told the customer. A case
// that cannot be read is said so in the notice; it never stops it.
func (n Notices) compose(ctx context.Context, call *Call, in NotifyStaffArgs) Notice {
	nt := Notice{
		ModelSubject: in.Subject, ModelNote: in.Body, Msg: call.Msg, ReplyTo: call.ReplyTo, TicketID: call.TicketID,
		Draft: call.Draft, Escalates: call.Scenario != nil && call.Scenario.Escalate,
	}
	if call.Scenario != nil {
		nt.Scenario = call.Scenario.Name
	}
	if n.ConsoleURL != "" && call.Key != "" {
		nt.Link = strings.TrimRight(n.ConsoleURL, "/") + "/conversation/" + call.Key.Ref()
	}
	if n.Case == nil || call.TicketID == "" {
		return nt
	}
	st, err := n.Case.Ticket(ctx, call.TicketID)
	if err != nil {
		nt.CaseProblem = "the ticket could not be read: " + err.Error()
		return nt
	}
	nt.Ticket = st
	current := ""
	if call.Msg != nil {
		current = call.Msg.MessageID
	}
	// Newest first, until the last MaxNoticeReplies of triage's replies are
	// found: however long the ticket, a notice reads a handful of them.
	for i := len(st.Messages) - 1; i >= 0 && len(nt.Told) < MaxNoticeReplies; i-- {
		m := st.Messages[i]
		if m.Direction != tickets.Outbound || m.MessageID == current {
			continue
		}
		raw, ok, err := n.Case.Reply(ctx, m.MessageID)
		switch {
		case err != nil:
			nt.CaseProblem = "an earlier reply could not be read: " + err.Error()
			continue
		case !ok:
			continue // not triage's: a person's reply, shown in the history
		}
		t := Told{MessageID: m.MessageID, Subject: m.Subject, At: m.At}
		if pm, err := message.Parse(raw); err == nil {
			t.Text = pm.Text
			if t.Subject == "" {
				t.Subject = pm.Subject
			}
		}
		nt.Told = append(nt.Told, t)
	}
	slices.Reverse(nt.Told) // oldest first
	return nt
}

// Notifier sends staff what becomes of a hand-off after its notice: the
// short second notice when the customer's reply did not go out.
type Notifier struct {
	Sender mail.Sender
	From   string // our From address
	Domain string // of the deterministic Message-IDs
}

// Unacknowledged is a hand-off whose notice went to staff but whose reply
// to the customer did not go out.
type Unacknowledged struct {
	Key         triage.Key // the inbound key (the notices' Message-IDs derive from it)
	InboundFrom string     // the From of the customer's message
	TicketID    string
	Staff       []string // the addresses the notice went to
	Escalates   bool
	Why         string // what stopped the reply (the outcome's reason and detail)
	Now         time.Time
}

// Unacknowledged mails each staff address a second notice, threaded under
// the first (its deterministic Message-ID), saying that the customer was
// not answered and why. Its Message-ID derives from the key too, so a
// retried email sends it once.
func (nf *Notifier) Unacknowledged(ctx context.Context, u Unacknowledged) error {
	label := Notice{Escalates: u.Escalates}.label()
	subject := label
	if u.TicketID != "" {
		subject += " " + tickets.Tag(oneLine(u.TicketID))
	}
	subject += " Not answered: triage's reply to the customer did not go out"
	body := "triage told you about this customer's email in the notice this message answers, " +
		"but its reply to the customer did not go out:\n\n" + quote(clip.Bytes(u.Why, MaxNoticeExcerpt*4, "…")) +
		"\nNobody has answered the customer (" + oneLine(u.InboundFrom) + "). The email is left for a person, " +
		"and triage did not take the conversation over.\n"
	var errs []error
	for _, to := range u.Staff {
		first := staffKey(u.Key, to)
		key := u.Key + triage.Key("|staff-unanswered|"+to)
		r := &mail.Reply{From: nf.From, To: to, Subject: subject, Body: body, Date: u.Now, Key: key, Notice: true,
			InboundFrom: u.InboundFrom, MessageID: mail.MessageIDFor(key, nf.Domain)}
		if u.Key != "" {
			id := mail.MessageIDFor(first, nf.Domain)
			r.InReplyTo, r.References = id, []string{id}
		}
		if _, err := nf.Sender.Send(ctx, r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// staffKey is the key of the staff notice about the email keyed k sent to
// to: its Message-ID, which a later notice about the same email threads
// under.
func staffKey(k triage.Key, to string) triage.Key { return k + triage.Key("|staff|"+to) }

// ComplaintDue is a consumer complaint whose statutory answer deadline
// nears (or passed) while nobody has answered it on its merits.
type ComplaintDue struct {
	Key         triage.Key // the inbound key of the complaint
	InboundFrom string     // the customer
	Subject     string     // the customer's subject
	TicketID    string
	Received    time.Time
	AnswerBy    time.Time
	Staff       []string
	Now         time.Time
}

// ComplaintDue mails each staff address a warning that the complaint must
// be answered on its merits by its deadline, or it is deemed accepted. Its
// Message-ID derives from the key and the address, so a warning sent
// again is the same message.
func (nf *Notifier) ComplaintDue(ctx context.Context, d ComplaintDue) error {
	left := d.AnswerBy.Sub(d.Now)
	subject := "Complaint due " + d.AnswerBy.UTC().Format("2006-01-02 15:04 MST")
	if left <= 0 {
		subject = "Complaint OVERDUE since " + d.AnswerBy.UTC().Format("2006-01-02 15:04 MST")
	}
	if d.TicketID != "" {
		subject += " " + tickets.Tag(oneLine(d.TicketID))
	}
	subject += ": " + clip.Bytes(oneLine(d.Subject), 120, "…")
	body := "A consumer complaint from " + oneLine(d.InboundFrom) + ", received " + d.Received.UTC().Format(time.RFC3339) +
		", has not been answered on its merits.\n\nIt must be answered by " + d.AnswerBy.UTC().Format(time.RFC3339) +
		"; a complaint not answered in time is deemed accepted.\n"
	if left <= 0 {
		body = "A consumer complaint from " + oneLine(d.InboundFrom) + ", received " + d.Received.UTC().Format(time.RFC3339) +
			", was not answered on its merits by its deadline, " + d.AnswerBy.UTC().Format(time.RFC3339) +
			": it may be deemed accepted.\n"
	}
	var errs []error
	for _, to := range d.Staff {
		key := d.Key + triage.Key("|complaint-due|"+to)
		r := &mail.Reply{From: nf.From, To: to, Subject: subject, Body: body, Date: d.Now, Key: key, Notice: true,
			InboundFrom: d.InboundFrom, MessageID: mail.MessageIDFor(key, nf.Domain)}
		if _, err := nf.Sender.Send(ctx, r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
