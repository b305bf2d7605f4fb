package processor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"triage"
	"triage/internal/clients/tickets"
	"triage/internal/clip"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/message"
	"triage/internal/prompt"
)

// The scenarios the pipeline chooses itself for conversations, when the
// loaded set has them: the one flagged followup answers a follow-up of an
// existing ticket; the one flagged escalate takes a follow-up that is the
// customer's third message on the conversation, or whose text matches the
// escalation scenario's own rules.
func isFollowUp(sc *instructions.Scenario) bool   { return sc.FollowUp }
func isEscalation(sc *instructions.Scenario) bool { return sc.Escalate }

// EscalateAfter is the number of earlier customer messages on a
// conversation after which the next one is escalated: the customer's third
// message. Only that one: once a person released the conversation back to
// triage, later messages are follow-ups again.
const EscalateAfter = 2

// Owners recorded by the pipeline's takeovers.
const OwnerEscalated = "staff (escalated)"

// History caps for the ticket in the facts block.
const (
	maxHistory       = 6   // earlier messages shown, the newest kept
	maxExcerptBytes  = 300 // per message
	maxSubjectBytes  = 120
	maxTicketSummary = 200
)

// conversation finds the ticket msg follows up: the customer's ticket
// holding the message it answers (In-Reply-To, then References from the
// newest), or the ticket tag in the subject, when the sender is that
// ticket's customer (a forged tag or a known Message-ID from another
// address starts a new conversation). It returns nil when there is none.
func (p *Processor) conversation(ctx context.Context, msg *message.Message) (*tickets.State, string, error) {
	ids := tickets.Answered(msg.InReplyTo, msg.References)
	st, err := p.cfg.Tickets.Find(ctx, msg.From.Address, ids)
	switch {
	case err == nil && ofCustomer(st, msg):
		return st, "its In-Reply-To/References name a message of " + st.TicketID, nil
	case err != nil && !errors.Is(err, tickets.ErrNotFound):
		return nil, "", err
	}
	// Not a thread of this customer's: the thread's ticket, whoever's.
	st, err = p.cfg.Tickets.Find(ctx, "", ids)
	switch {
	case err == nil && st.AgentDisabled:
		// Someone else writing into a thread a person owns (a colleague
		// in Cc, the customer from another address): never answered
		// automatically, nor appended to the ticket; left for the person.
		return nil, "", &strangerInOwnedThread{ticket: st.TicketID, owner: st.Owner}
	case err == nil:
		// Message-IDs are not secrets (they travel in every Cc and
		// forward): whoever names one must not join someone else's ticket,
		// read its history in the facts or add notes to it. Like a forged
		// tag, it starts a new conversation.
		p.cfg.Logger.InfoContext(ctx, "References from another address ignored: a new conversation",
			"ticket", st.TicketID, "from", msg.From.Address, "message_id", msg.MessageID)
	case !errors.Is(err, tickets.ErrNotFound):
		return nil, "", err
	}
	id := tickets.TagInSubject(msg.Subject)
	if id == "" {
		return nil, "", nil
	}
	st, err = p.cfg.Tickets.Get(ctx, id)
	switch {
	case errors.Is(err, tickets.ErrNotFound):
		return nil, "", nil
	case err != nil:
		return nil, "", err
	case !ofCustomer(st, msg):
		p.cfg.Logger.InfoContext(ctx, "ticket tag from another address ignored: a new conversation",
			"ticket", id, "from", msg.From.Address, "reply_to", msg.ReplyTo, "message_id", msg.MessageID)
		return nil, "", nil
	}
	return st, "its subject carries the tag of " + st.TicketID + " and it comes from the ticket's customer", nil
}

// ofCustomer reports whether msg is the ticket's customer's: its From, and
// the address the reply goes to, are the customer's. From is only a claim
// (it costs nothing to write someone else's); a follow-up sees the ticket's
// history in its facts, so a forged From with a Reply-To elsewhere must not
// join, or the history would be mailed to that other address.
func ofCustomer(st *tickets.State, msg *message.Message) bool {
	return st.Customer(msg.From.Address) && (msg.ReplyTo == "" || st.Customer(msg.ReplyTo))
}

// strangerInOwnedThread is conversation's answer for a message whose
// In-Reply-To/References name a conversation a person owns, from an address
// that is not its customer's.
type strangerInOwnedThread struct{ ticket, owner string }

func (e *strangerInOwnedThread) Error() string {
	return fmt.Sprintf("its In-Reply-To/References name %s, which %s owns, but it does not come from the ticket's customer: left for that person, not appended to the ticket",
		e.ticket, cmp.Or(e.owner, "a person"))
}

// noteID is the key of the note a message adds: its Message-ID, or the
// idempotency key when it has none.
func noteID(msg *message.Message, key triage.Key) string {
	if msg.MessageID != "" {
		return msg.MessageID
	}
	return "<" + string(key) + "@no-message-id.invalid>"
}

// earlierInbound counts the customer's messages on the ticket other than
// this one (so a retried email counts the same).
func earlierInbound(st *tickets.State, id string) int {
	n := 0
	for _, m := range st.Messages {
		if m.Direction == tickets.Inbound && m.MessageID != id && m.From != NoteAuthor {
			n++
		}
	}
	return n
}

// ticketFacts summarizes the ticket for the model: id, status, and the
// earlier messages (the newest maxHistory, excerpts capped).
func ticketFacts(st *tickets.State, current string) *prompt.Ticket {
	t := &prompt.Ticket{
		ID:       st.TicketID,
		Status:   st.Status,
		Summary:  clip.Bytes(st.Summary, maxTicketSummary, truncated),
		Serial:   st.SerialNumber,
		Messages: earlierInbound(st, current) + 1,
		History:  []prompt.Entry{},
	}
	if st.AgentDisabled {
		t.Status += " (taken over by a person)"
	}
	if !st.CreatedAt.IsZero() {
		t.Opened = st.CreatedAt.UTC().Format(time.RFC3339)
	}
	notes := map[string]string{}
	for _, n := range st.Notes {
		notes[n.MessageID] = n.Text
	}
	for _, m := range st.Messages {
		if m.MessageID == current || m.From == NoteAuthor {
			continue // triage's own notes are no messages of the conversation
		}
		e := prompt.Entry{From: "customer", Subject: clip.Bytes(m.Subject, maxSubjectBytes, truncated)}
		if m.Direction == tickets.Outbound {
			e.From = "us"
		}
		if !m.At.IsZero() {
			e.At = m.At.UTC().Format(time.RFC3339)
		}
		if text := strings.Join(strings.Fields(notes[m.MessageID]), " "); text != "" {
			e.Excerpt = clip.Bytes(text, maxExcerptBytes, truncated)
		}
		t.History = append(t.History, e)
	}
	if len(t.History) > maxHistory {
		t.History = t.History[len(t.History)-maxHistory:]
	}
	return t
}

// record notes our reply on the ticket so the customer's answer to it
// finds the conversation. The reply has gone out either way: a failure is
// logged, and the answer still finds the ticket through the References our
// reply carries (they include the inbound Message-ID).
func (p *Processor) recordReply(ctx context.Context, ticketID string, reply *triage.Receipt, at time.Time) {
	if p.cfg.Tickets == nil || ticketID == "" || reply == nil || reply.MessageID == "" {
		return
	}
	err := p.cfg.Tickets.AddMessage(context.WithoutCancel(ctx), ticketID, tickets.Message{
		MessageID: reply.MessageID, Direction: tickets.Outbound, Subject: reply.Subject, At: at,
	})
	if err != nil {
		p.cfg.Logger.WarnContext(ctx, "reply not recorded on its ticket", "ticket", ticketID, "message_id", reply.MessageID, "err", err)
	}
}

// openForEscalation opens (idempotently) the ticket an escalation of a new
// email is taken over on.
func (p *Processor) openForEscalation(ctx context.Context, msg *message.Message, key triage.Key, serials []string) (string, error) {
	sn := ""
	if len(serials) > 0 {
		sn = serials[0]
	}
	t, err := p.cfg.Tickets.Create(ctx, tickets.Request{
		SerialNumber:   sn,
		CustomerEmail:  strings.ToLower(msg.From.Address),
		Priority:       "high",
		Summary:        msg.Subject,
		IdempotencyKey: dispatcher.TicketKey(key, sn),
		MessageID:      msg.MessageID,
	})
	if err != nil {
		return "", fmt.Errorf("processor: open a ticket for the escalation: %w", err)
	}
	return t.TicketID, nil
}
