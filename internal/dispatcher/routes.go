package dispatcher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

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
func TicketKey(key, serialNumber string) string {
	sum := sha256.Sum256([]byte(key + "|" + serial.Normalize(serialNumber)))
	return hex.EncodeToString(sum[:])[:32]
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
		body, _ := call.Args["body"].(string)
		if err := plainBody(body, call.MaxBodyBytes); err != nil {
			return nil, err
		}
		r := &mail.Reply{
			From:    from,
			To:      to,
			Subject: mail.ReplySubject(subject),
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
		return toMap(rc)
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
