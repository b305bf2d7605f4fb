package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	gomail "github.com/emersion/go-message/mail"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/replies"
	"triage/internal/review"
)

// MaxEditBytes bounds the text of an edited draft a person sends.
const MaxEditBytes = 20000

// parsedReply is our rendered reply or draft, read back from the ledger.
type parsedReply struct {
	From, To, ToName, Subject string
	InReplyTo                 string
	References                []string
	Body                      string
}

// parseReply reads a reply triage rendered (mail.Render): its addresses,
// subject, threading and plain-text body.
func parseReply(raw []byte) (parsedReply, error) {
	var p parsedReply
	mr, err := gomail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		return p, fmt.Errorf("console: read reply: %w", err)
	}
	defer mr.Close()
	h := mr.Header
	if from, err := h.AddressList("From"); err == nil && len(from) == 1 {
		p.From = from[0].String()
	}
	if to, err := h.AddressList("To"); err == nil && len(to) == 1 {
		p.To, p.ToName = to[0].Address, to[0].Name
	}
	if p.Subject, err = h.Subject(); err != nil {
		p.Subject = h.Get("Subject")
	}
	if ids, err := h.MsgIDList("In-Reply-To"); err == nil && len(ids) > 0 {
		p.InReplyTo = "<" + ids[0] + ">"
	}
	if ids, err := h.MsgIDList("References"); err == nil {
		for _, id := range ids {
			p.References = append(p.References, "<"+id+">")
		}
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return p, fmt.Errorf("console: read reply body: %w", err)
		}
		// triage renders text/plain; any other text part is shown as
		// its source text (escaped like everything else).
		if ih, ok := part.Header.(*gomail.InlineHeader); ok {
			if ct, _, _ := ih.ContentType(); ct != "" && !strings.HasPrefix(ct, "text/") {
				continue
			}
		}
		b, err := io.ReadAll(io.LimitReader(part.Body, 1<<20))
		if err != nil {
			return p, fmt.Errorf("console: read reply body: %w", err)
		}
		p.Body = strings.ReplaceAll(string(b), "\r\n", "\n")
		break
	}
	return p, nil
}

// errNoSender: the console was started without SMTP or an outbox.
var errNoSender = errors.New("console: no way to send: configure smtp or outbox")

// sendDraft sends the draft of key, as it is (body "") or with the text a
// person edited, through the configured sender with the draft's own
// threading and Message-ID, exactly as triage renders its replies. The
// draft is claimed first, so two people approving it send it once. What was
// sent is recorded as the draft's fate (sent as is, or edited with its
// similarity to the draft) and, when the email has a ticket, as an
// outgoing message of the conversation.
func (s *Server) sendDraft(ctx context.Context, key triage.Key, edited, user, ticketID string) (string, error) {
	if s.cfg.Sender == nil {
		return "", errNoSender
	}
	l := s.cfg.Ledger
	d, was, err := l.Replies().ClaimDraft(ctx, key)
	if err != nil {
		return "", err
	}
	p, err := parseReply(d.Raw)
	if err == nil && p.To == "" {
		err = errors.New("console: the draft has no recipient")
	}
	if err != nil {
		return "", errors.Join(err, l.Replies().UnclaimDraft(context.WithoutCancel(ctx), key, was))
	}
	body, outcome, sim := p.Body, replies.DraftSentAsIs, 1.0
	if edited != "" {
		body = strings.ReplaceAll(edited, "\r\n", "\n")
		outcome, sim = review.Grade(p.Body, body)
	}
	r := &mail.Reply{
		From: p.From, To: p.To, ToName: p.ToName, Subject: p.Subject, Body: body,
		InReplyTo: p.InReplyTo, References: p.References, MessageID: d.MessageID,
		Date: s.cfg.Now(), Key: key,
	}
	raw, err := mail.Render(r)
	if err != nil {
		return "", errors.Join(err, l.Replies().UnclaimDraft(context.WithoutCancel(ctx), key, was))
	}
	if _, err := s.cfg.Sender.Send(ctx, r); err != nil {
		var se *mail.SMTPError
		if !errors.As(err, &se) || mail.NotSubmitted(err) {
			// Certainly not sent (refused before DATA, or the outbox
			// could not write): the draft waits again.
			return "", errors.Join(err, l.Replies().UnclaimDraft(context.WithoutCancel(ctx), key, was))
		}
		// Perhaps sent: it stays claimed (draft_sending), for a person to
		// check the Sent folder; never sent twice from here.
		s.log.Warn("console: draft submission ended ambiguously; left for a person", "reply_message_id", d.MessageID, "stage", sendStage(err))
		return "", fmt.Errorf("the mail server may or may not have taken the reply (%v); it will not be sent again from the console: check the Sent folder", err)
	}
	lctx := context.WithoutCancel(ctx)
	if err := l.Replies().DraftSent(lctx, key, outcome, sim, raw); err != nil {
		return "", fmt.Errorf("console: reply %s was sent but not recorded: %w", d.MessageID, err)
	}
	if ticketID != "" && s.cfg.Tickets != nil {
		if err := s.cfg.Tickets.AddMessage(lctx, ticketID, tickets.Message{MessageID: d.MessageID, Direction: tickets.Outbound, From: user, Subject: p.Subject}); err != nil {
			s.log.Warn("console: reply sent; recording it on the ticket failed", "ticket", ticketID, "err", err)
		}
	}
	s.log.Info("console: draft sent", "user", user, "reply_message_id", d.MessageID, "outcome", outcome)
	return outcome, nil
}

// sendStage names where sending failed without the server's words (an SMTP
// reply often quotes the recipient's address, which stays out of the logs;
// the person who pressed the button sees the whole error).
func sendStage(err error) string {
	var se *mail.SMTPError
	if errors.As(err, &se) {
		return "smtp " + se.Op
	}
	return "other"
}
