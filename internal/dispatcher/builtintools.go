// check_warranty, create_ticket and send_email: the builtins over the
// warranty, ticket and mail clients.

package dispatcher

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"triage"
	"triage/internal/agent"
	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/clients/warranty"
	"triage/internal/clip"
	"triage/internal/decision"
	"triage/internal/serial"
)

// DefaultPriority is create_ticket's priority when the model gives none.
const DefaultPriority = "normal"

// CheckWarrantyArgs are check_warranty's arguments.
type CheckWarrantyArgs struct {
	SerialNumber string `json:"serial_number"`
}

// Warranty is check_warranty's result: the registry's warranty.Result and,
// under a policy, the decision on it (decision.Decide at the email's time
// of receipt, Call.Received): a fact the model words, never one it makes.
type Warranty struct {
	warranty.Result
	Decision *decision.Decision `json:"decision,omitempty"`
}

func (w Warranty) decided() *decision.Decision { return w.Decision }

// CheckWarranty looks the serial up with c and, when p is set, decides
// what the shop owes under p.
func CheckWarranty(c warranty.Checker, p *decision.Policy) Handler[CheckWarrantyArgs, Warranty] {
	return func(ctx context.Context, call *Call, in CheckWarrantyArgs) (Warranty, error) {
		res, err := c.Check(ctx, in.SerialNumber)
		if err != nil || p == nil {
			return Warranty{Result: res}, err
		}
		d := decision.Decide(p, res, call.Received)
		return Warranty{Result: res, Decision: &d}, nil
	}
}

// CreateTicketArgs are create_ticket's arguments.
type CreateTicketArgs struct {
	SerialNumber  string `json:"serial_number"`
	CustomerEmail string `json:"customer_email"`
	Priority      string `json:"priority"`
}

// Ticket is create_ticket's result: the tickets.Ticket.
type Ticket struct{ tickets.Ticket }

func (t Ticket) ticket() string { return t.TicketID }

// CreateTicket opens a ticket with c. The ticket idempotency key is derived
// from the inbound key and the normalized serial, so a retried email never
// opens a second ticket; the summary is the inbound subject.
func CreateTicket(c tickets.Creator) Handler[CreateTicketArgs, Ticket] {
	return func(ctx context.Context, call *Call, in CreateTicketArgs) (Ticket, error) {
		email := in.CustomerEmail
		if addr, err := BareAddress(email); err == nil {
			email = addr
		}
		req := tickets.Request{
			SerialNumber:   in.SerialNumber,
			CustomerEmail:  email,
			Priority:       cmp.Or(in.Priority, DefaultPriority),
			IdempotencyKey: TicketKey(call.Key, in.SerialNumber),
		}
		if call.Msg != nil {
			req.Summary = call.Msg.Subject
			req.MessageID = call.Msg.MessageID
		}
		t, err := c.Create(ctx, req)
		return Ticket{t}, err
	}
}

// TicketKey is the ticket idempotency key for an inbound key and a serial:
// hex sha256(key + "|" + normalized serial), first 32 characters.
func TicketKey(key triage.Key, serialNumber string) string {
	sum := sha256.Sum256([]byte(string(key) + "|" + serial.Normalize(serialNumber)))
	return hex.EncodeToString(sum[:])[:32]
}

// SendEmailArgs are send_email's arguments.
type SendEmailArgs struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
}

// Sent is send_email's result: where the reply went, as the model sees it,
// and the typed receipt the pipeline reads.
type Sent struct {
	MessageID string          `json:"message_id"`
	To        string          `json:"to,omitempty"`
	Path      string          `json:"path,omitempty"`
	Status    triage.Delivery `json:"status"`
	Existing  bool            `json:"existing,omitempty"`
	// Subject is what went out, when the pipeline changed the model's.
	Subject string `json:"subject,omitempty"`
	sent    string // the subject that went out, changed or not
}

func (s Sent) receipt() *triage.Receipt {
	rc := s.Receipt(s.sent)
	return &rc
}

// Receipt is the typed receipt s stands for; subject is what went out when
// s.Subject, set only when the pipeline changed it, is empty.
func (s Sent) Receipt(subject string) triage.Receipt {
	return triage.Receipt{
		To: s.To, Subject: cmp.Or(s.Subject, subject), MessageID: s.MessageID, Path: s.Path,
		Existing: s.Existing, Drafted: s.Status == triage.DeliveryDrafted,
	}
}

// SendEmail sends the reply through s, threaded under the inbound message,
// with a Message-ID derived from the inbound key (mail.MessageIDFor) so a
// retried email reuses it, and the ticket's tag in the subject. A reply to
// another address than the message's From carries NeutralSubject, not the
// model's.
func SendEmail(s mail.Sender, from, domain string) Handler[SendEmailArgs, Sent] {
	return func(ctx context.Context, call *Call, in SendEmailArgs) (Sent, error) {
		to := in.To
		if addr, err := BareAddress(to); err == nil {
			to = addr
		}
		subject := ReplySubject(in.Subject, call.TicketID)
		if call.Msg != nil && !strings.EqualFold(call.Msg.From.Address, to) {
			// Not the sender: the subject a stranger wrote (or the model
			// copied) is never echoed to someone else under our address.
			subject = ReplySubject(NeutralSubject(call.Language), call.TicketID)
		}
		if err := PlainBody(in.Body, call.MaxBodyBytes); err != nil {
			return Sent{}, err
		}
		r := &mail.Reply{From: from, To: to, Subject: subject, Body: in.Body, Date: call.Now, Key: call.Key, Draft: call.Draft, Language: call.Language}
		if call.Key != "" {
			r.MessageID = mail.MessageIDFor(call.Key, domain)
		}
		if call.Msg != nil {
			r.InboundDigest = triage.DigestOf(call.Msg)
			r.InboundFrom = call.Msg.From.Address
			if strings.EqualFold(call.Msg.From.Address, to) {
				r.ToName = call.Msg.From.Name // the customer's display name, when they gave one
			}
			r.InReplyTo = call.Msg.MessageID
			r.References = mail.ThreadReferences(call.Msg.References, call.Msg.MessageID)
		}
		rc, err := s.Send(ctx, r)
		if errors.Is(err, mail.ErrOtherInbound) {
			return Sent{}, &Error{Code: CodeDuplicateKey, Message: err.Error() + "; a person answers this message",
				Refused: true, Reason: triage.ReasonDuplicateKey}
		}
		var lim triage.Limited
		if errors.As(err, &lim) {
			// A limit stands whatever the model does next: the loop ends.
			return Sent{}, &Error{Code: agent.ErrorCode(lim.LimitReason()), Message: err.Error() + "; nothing was sent, a person answers this message",
				Refused: true, Halt: true, Reason: lim.LimitReason()}
		}
		if err != nil {
			return Sent{}, err
		}
		rc.Subject = subject
		return SentOf(rc, in.Subject), nil
	}
}

// neutralSubjects are the subjects of a reply that goes to another address
// than the message's From (its Reply-To), by language.
var neutralSubjects = map[string]string{
	"en": "Your message to our service",
	"pl": "Twoja wiadomość do naszego serwisu",
	"de": "Ihre Nachricht an unseren Service",
}

// NeutralSubject is the subject of a reply to an address other than the
// message's From, in lang when known (else English): the sender's own
// subject is never mailed to a third party.
func NeutralSubject(lang string) string {
	if s, ok := neutralSubjects[lang]; ok {
		return s
	}
	return neutralSubjects["en"]
}

// SentOf is send_email's result for the reply rc says went out (or was
// drafted); asked is the subject the model gave: the result names the
// subject that went out only when the pipeline changed it.
func SentOf(rc triage.Receipt, asked string) Sent {
	out := Sent{MessageID: rc.MessageID, To: rc.To, Path: rc.Path, Status: rc.Delivery(), Existing: rc.Existing, sent: rc.Subject}
	if rc.Subject != asked {
		out.Subject = rc.Subject
	}
	return out
}

// ReplySubject is the subject of a reply: one "Re:" and, for a ticketed
// email, the ticket's tag (no other), whatever the model wrote; the
// customer's answer finds its ticket by it. It is at most
// mail.MaxSubjectBytes: the text before the tag is shortened on a rune
// boundary, the tag is kept.
func ReplySubject(subject, ticketID string) string {
	s := mail.ReplySubject(tickets.WithTag(subject, ""))
	room := mail.MaxSubjectBytes
	if ticketID != "" {
		room -= len(" " + tickets.Tag(ticketID))
	}
	if len(s) > room {
		s = strings.TrimSpace(clip.Bytes(s, room, ""))
	}
	return tickets.WithTag(s, ticketID)
}
