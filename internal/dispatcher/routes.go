package dispatcher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/clients/warranty"
	"triage/internal/serial"
)

// DefaultPriority is create_ticket's priority when the model gives none.
const DefaultPriority = "normal"

// Routes builds the standard builtins (Config.Builtins), by builtin name:
// check_warranty, create_ticket and send_email. from is our From address, domain the right-hand side of the
// deterministic reply Message-IDs.
func Routes(w warranty.Checker, t tickets.Creator, m mail.Sender, from, domain string) map[string]Func {
	return map[string]Func{
		FuncCheckWarranty: CheckWarranty(w),
		FuncCreateTicket:  CreateTicket(t),
		FuncSendEmail:     SendEmail(m, from, domain),
		FuncNotifyStaff:   NotifyStaff(m, from, domain),
	}
}

// CheckWarranty routes check_warranty{serial_number} to c; the result is the
// warranty.Result.
func CheckWarranty(c warranty.Checker) Func {
	return func(ctx context.Context, call *Call) (map[string]any, error) {
		sn, _ := call.Args["serial_number"].(string)
		res, err := c.Check(ctx, sn)
		if err != nil {
			return nil, err
		}
		return toMap(res)
	}
}

// CreateTicket routes create_ticket{serial_number, customer_email, priority}
// to c. The ticket idempotency key is derived from the inbound key and the
// normalized serial, so a retried email never opens a second ticket; the
// summary is the inbound subject. The result is the tickets.Ticket.
func CreateTicket(c tickets.Creator) Func {
	return func(ctx context.Context, call *Call) (map[string]any, error) {
		sn, _ := call.Args["serial_number"].(string)
		email, _ := call.Args["customer_email"].(string)
		if addr, err := bareAddress(email); err == nil {
			email = addr
		}
		prio, _ := call.Args["priority"].(string)
		if prio == "" {
			prio = DefaultPriority
		}
		req := tickets.Request{
			SerialNumber:   sn,
			CustomerEmail:  email,
			Priority:       prio,
			IdempotencyKey: TicketKey(call.Key, sn),
		}
		if call.Msg != nil {
			req.Summary = call.Msg.Subject
			req.MessageID = call.Msg.MessageID
		}
		t, err := c.Create(ctx, req)
		if err != nil {
			return nil, err
		}
		return toMap(t)
	}
}

// TicketKey is the ticket idempotency key for an inbound key and a serial:
// hex sha256(key + "|" + normalized serial), first 32 characters.
func TicketKey(key triage.Key, serialNumber string) string {
	sum := sha256.Sum256([]byte(string(key) + "|" + serial.Normalize(serialNumber)))
	return hex.EncodeToString(sum[:])[:32]
}

// replySubject is the subject a reply goes out with: one "Re: ", no tag
// but the ticket's own, at most mail.MaxSubjectBytes (the text before the
// tag is shortened on a rune boundary, the tag is kept).
func replySubject(subject, ticketID string) string {
	s := mail.ReplySubject(tickets.WithTag(subject, ""))
	room := mail.MaxSubjectBytes
	if ticketID != "" {
		room -= len(" " + tickets.Tag(ticketID))
	}
	if len(s) > room {
		cut := max(room, 0)
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = strings.TrimSpace(s[:cut])
	}
	return tickets.WithTag(s, ticketID)
}

// SendEmail routes send_email{to, subject, body} to s as a reply threaded
// under the inbound message, with a Message-ID derived from the inbound key
// (mail.MessageIDFor) so a retried email reuses it. The result is the
// mail.Receipt.
func SendEmail(s mail.Sender, from, domain string) Func {
	return func(ctx context.Context, call *Call) (map[string]any, error) {
		to, _ := call.Args["to"].(string)
		if addr, err := bareAddress(to); err == nil {
			to = addr
		}
		subject, _ := call.Args["subject"].(string)
		// A reply to a ticketed email carries the ticket's tag, whatever the
		// model wrote: the customer's answer finds its ticket by it.
		subject = replySubject(subject, call.TicketID)
		body, _ := call.Args["body"].(string)
		if err := plainBody(body, call.MaxBodyBytes); err != nil {
			return nil, err
		}
		r := &mail.Reply{
			From:    from,
			To:      to,
			Subject: subject,
			Body:    body,
			Date:    call.Now,
			Key:     call.Key,
			Draft:   call.Draft,
		}
		if call.Key != "" {
			r.MessageID = mail.MessageIDFor(call.Key, domain)
		}
		if call.Msg != nil {
			if strings.EqualFold(call.Msg.From.Address, to) {
				r.ToName = call.Msg.From.Name // the customer's display name, when they gave one
			}
			r.InReplyTo = call.Msg.MessageID
			r.References = threadRefs(call.Msg.References, call.Msg.MessageID)
		}
		rc, err := s.Send(ctx, r)
		if err != nil {
			return nil, err
		}
		res, err := toMap(rc)
		if err == nil && subject != call.Args["subject"] {
			res["subject"] = subject // what went out, when the pipeline changed it
		}
		return res, err
	}
}

// NotifyStaff routes notify_staff{subject, body} to every staff address
// (Config.StaffAddresses, passed in Call.Staff): one message each, never to
// the customer, with a Message-ID derived from the inbound key and the
// address (so a retried email reuses it) and, before the model's text, the
// facts triage checked: the customer, the inbound Message-ID and the
// ticket. It is not a reply: its ledger key
// differs from the customer reply's. The result is
// {"notified": [...addresses], "message_ids": [...]}.
func NotifyStaff(s mail.Sender, from, domain string) Func {
	return func(ctx context.Context, call *Call) (map[string]any, error) {
		staff := call.Staff
		if len(staff) == 0 {
			return nil, &Error{Code: CodeNoStaff, Message: "no staff address is configured; the email is left for a person", Refused: true}
		}
		subject, _ := call.Args["subject"].(string)
		subject = tickets.WithTag(strings.TrimSpace(subject), call.TicketID)
		body, _ := call.Args["body"].(string)
		if err := plainBody(body, call.MaxBodyBytes); err != nil {
			return nil, err
		}
		var facts []string
		if call.Msg != nil {
			facts = append(facts, "Customer: "+call.Msg.From.Address)
			if rt := call.Msg.ReplyTo; rt != "" && !strings.EqualFold(rt, call.Msg.From.Address) {
				// From is only a claim: staff see that the customer's
				// acknowledgement went elsewhere.
				facts = append(facts, "Reply-To (our acknowledgement went there): "+rt)
			}
			facts = append(facts, "Customer subject: "+call.Msg.Subject, "Message-ID: "+call.Msg.MessageID)
		}
		if call.TicketID != "" {
			facts = append(facts, "Ticket: "+call.TicketID+" (taken over for a person: triage no longer answers this conversation)")
		}
		if len(facts) > 0 {
			// The facts come first: the body is the model's, written from
			// the customer's email, and may carry a forged "-- \nCustomer:"
			// block; behind a signature separator of our own, the real
			// facts were the part mail clients fold away.
			body = "Escalated by triage. Checked by triage:\n" + strings.Join(facts, "\n") +
				"\n\nThe assistant's note (written from the customer's email, not checked):\n\n" + strings.TrimRight(body, "\n") + "\n"
		}
		var sent, ids []any
		for _, to := range staff {
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
				return nil, err
			}
			sent, ids = append(sent, to), append(ids, rc.MessageID)
		}
		return map[string]any{"notified": sent, "message_ids": ids}, nil
	}
}

// threadRefs is the inbound References plus its Message-ID, as the reply's
// References: valid msg-ids only, without duplicates, trimmed to the first
// and the last 20 (mail.ThreadReferences).
func threadRefs(refs []string, id string) []string {
	return mail.ThreadReferences(refs, id)
}

func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("dispatcher: encode result: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("dispatcher: encode result: %w", err)
	}
	return m, nil
}
