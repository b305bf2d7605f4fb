package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/replies"
)

// A person's reply from the console, to an email a person owns: sent
// through the same path as triage's replies (replies.Store's memory and
// limits, the configured SMTP server or outbox, threaded with
// In-Reply-To and References, on the ticket), recorded as a person's
// reply (replies.KindPerson: never triage's), filed in the Sent folder by
// triage watch (woken for it). What a person is writing can be saved and
// reopened (a composition).

// composerView is the composer of one email.
type composerView struct {
	Ref      string
	To       string
	Subject  string
	Saved    *replies.Composition // what was saved, nil when nothing
	Body     string               // the text to start from
	Sent     []personReplyView    // what people already sent to it
	CanSend  bool
	Why      string // why the composer is offered (the email's owner)
	Disabled string // why it cannot send, "" when it can
}

// personReplyView is one reply a person sent.
type personReplyView struct {
	replies.Reply
	Text parsedReply
}

// personOwns says why a person owns the email of ev (it may be answered
// from the console): "" when triage does, or a draft of triage waits.
func personOwns(ev emailView, ticket *tickets.State) string {
	if ev.Reply != nil && ev.Reply.Waiting {
		return "" // approve, edit or reject triage's draft first
	}
	switch {
	case ticket != nil && ticket.AgentDisabled:
		return "taken over by " + cmpOr(ticket.Owner, "a person")
	case ev.Outcome != nil && ev.Outcome.Escalated:
		return "escalated"
	case ev.Reply != nil && ev.Reply.Outcome == replies.DraftRejected:
		return "draft rejected"
	}
	switch ev.Entry.State {
	case ledger.StateFailed, ledger.StateNeedsHuman, ledger.StateOverLimit:
		return string(ev.Entry.State)
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// composer builds the composer of ev, or nil when a person does not own it.
func (s *Server) composer(ctx context.Context, ev emailView, ticket *tickets.State) (*composerView, error) {
	why := personOwns(ev, ticket)
	sent, err := s.cfg.Ledger.Replies().PersonReplies(ctx, ev.Entry.Key)
	if err != nil {
		return nil, err
	}
	if why == "" && len(sent) == 0 {
		return nil, nil
	}
	cv := &composerView{Ref: ev.Ref, To: replyTo(ev), Subject: replySubject(ev.Entry.Subject), CanSend: s.cfg.Sender != nil && s.cfg.From != "", Why: why}
	switch {
	case s.cfg.Sender == nil:
		cv.Disabled = "no smtp or outbox configured"
	case s.cfg.From == "":
		cv.Disabled = "no From address configured (pipeline.from)"
	}
	for _, r := range sent {
		full, err := s.cfg.Ledger.Replies().GetReply(ctx, r.Key)
		if err != nil {
			return nil, err
		}
		pv := personReplyView{Reply: r}
		pv.Text, _ = parseReply(full.Raw)
		cv.Sent = append(cv.Sent, pv)
	}
	if why == "" {
		return cv, nil
	}
	c, err := s.cfg.Ledger.Replies().Composition(ctx, ev.Entry.Key)
	switch {
	case err == nil:
		cv.Saved, cv.Body = &c, c.Body
	case !errors.Is(err, replies.ErrNotFound):
		return nil, err
	}
	return cv, nil
}

// replyTo is the address a person's reply to ev goes to: where triage's
// reply or draft went, else the email's sender.
func replyTo(ev emailView) string {
	if ev.Reply != nil && ev.Reply.To != "" {
		return ev.Reply.To
	}
	return ev.Entry.Sender
}

func replySubject(subject string) string {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(subject)), "re:") {
		return subject
	}
	return "Re: " + subject
}

// compose sends a person's reply, or saves it (save=1).
func (s *Server) compose(w http.ResponseWriter, r *http.Request) {
	e, ref, ok := s.target(w, r)
	if !ok {
		return
	}
	back := "/conversation/" + ref
	body := strings.ReplaceAll(r.PostFormValue("body"), "\r\n", "\n")
	switch {
	case strings.TrimSpace(body) == "":
		s.message(w, r, http.StatusBadRequest, "Nothing to send", "The reply is empty.", back)
		return
	case len(body) > MaxEditBytes || !utf8.ValidString(body):
		s.message(w, r, http.StatusBadRequest, "Reply too long", "A reply may hold at most 20000 bytes of UTF-8 text.", back)
		return
	}
	ev, err := s.emailOf(r.Context(), e)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var ticket *tickets.State
	if s.cfg.Tickets != nil {
		if ticket, err = s.ticketOf(r.Context(), e); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	if personOwns(ev, ticket) == "" {
		s.message(w, r, http.StatusConflict, "triage answers this email", "Only an email a person owns (taken over, escalated, failed, waiting in Needs-Human, or whose draft was rejected) is answered from here; approve or reject triage's draft, or take the conversation over first.", back)
		return
	}
	if r.PostFormValue("save") != "" {
		if err := s.cfg.Ledger.Replies().SaveComposition(r.Context(), e.Key, userOf(r), body); err != nil {
			s.fail(w, r, err)
			return
		}
		s.done(w, r, ref, "saved")
		return
	}
	if err := s.sendPersonReply(r.Context(), ev, ticket, body, userOf(r)); err != nil {
		var le *replies.LimitError
		switch {
		case errors.Is(err, errNoSender):
			s.message(w, r, http.StatusConflict, "Sending is not configured", "The console has no SMTP server or outbox, or no From address (pipeline.from), to send with.", back)
		case errors.As(err, &le):
			s.message(w, r, http.StatusConflict, "Over a reply limit", "Not sent: "+err.Error()+". The text is kept: save it and send it later.", back)
		default:
			s.log.Error("console: a person's reply failed", "ref", ref, "stage", sendStage(err))
			s.message(w, r, http.StatusBadGateway, "Not sent", err.Error(), back)
		}
		return
	}
	s.record(r, ev.Entry.Key, ledger.ActionReplied, "")
	s.done(w, r, ref, "replied")
}

// sendPersonReply sends body to the customer of ev as user's reply, as
// triage sends its own: recorded first under the reply limits, submitted,
// recorded sent; then added to the ticket, the saved composition dropped,
// and triage watch woken to file it in the Sent folder.
func (s *Server) sendPersonReply(ctx context.Context, ev emailView, ticket *tickets.State, body, user string) error {
	if s.cfg.Sender == nil || s.cfg.From == "" {
		return errNoSender
	}
	e := ev.Entry
	inReplyTo, refs := e.MessageID, []string{}
	if ev.Reply != nil && ev.Reply.ParseError == "" && len(ev.Reply.Text.References) > 0 {
		refs = append(refs, ev.Reply.Text.References...)
	} else if e.MessageID != "" {
		refs = append(refs, e.MessageID)
	}
	key := replies.PersonKey(e.Key)
	rep := &mail.Reply{
		From: s.cfg.From, To: replyTo(ev), Subject: replySubject(e.Subject), Body: body,
		InReplyTo: inReplyTo, References: refs, MessageID: mail.MessageIDFor(key, s.cfg.Domain),
		Date: s.cfg.Now(), Key: key, InboundFrom: e.Sender,
	}
	raw, err := mail.Render(rep)
	if err != nil {
		return err
	}
	rs := s.cfg.Ledger.Replies()
	rec := replies.Reply{Key: key, MessageID: rep.MessageID, To: rep.To, InboundFrom: e.Sender, Raw: raw, Kind: replies.KindPerson,
		Author: user, Answers: e.Key, Account: e.Account, Mailbox: e.Mailbox}
	if err := rs.PutPendingWithin(ctx, rec, s.cfg.Limits); err != nil {
		return err
	}
	lctx := context.WithoutCancel(ctx)
	if _, err := s.cfg.Sender.Send(ctx, rep); err != nil {
		if mail.NotSubmitted(err) {
			return errors.Join(err, rs.DropPending(lctx, key))
		}
		// Perhaps sent: never sent again from here; a person checks.
		s.log.Warn("console: a person's reply ended ambiguously; left for a person", "reply_message_id", rep.MessageID, "stage", sendStage(err))
		return errors.Join(fmt.Errorf("the mail server may or may not have taken the reply (%v); it will not be sent again from the console: check the Sent folder", err),
			rs.MarkReplyNeedsHuman(lctx, key))
	}
	if err := rs.MarkSent(lctx, key); err != nil {
		return fmt.Errorf("console: reply %s was sent but not recorded: %w", rep.MessageID, err)
	}
	if err := rs.DropComposition(lctx, e.Key); err != nil {
		s.log.Warn("console: reply sent; its saved draft stays", "err", err)
	}
	if ticket != nil && s.cfg.Tickets != nil {
		if err := s.cfg.Tickets.AddMessage(lctx, ticket.TicketID, tickets.Message{MessageID: rep.MessageID, Direction: tickets.Outbound, From: user, Subject: rep.Subject}); err != nil {
			s.log.Warn("console: reply sent; recording it on the ticket failed", "ticket", ticket.TicketID, "err", err)
		}
		note := tickets.Note{MessageID: "<note-" + strings.Trim(rep.MessageID, "<>") + ">", From: user + " (console)", Subject: "reply sent",
			Text: "Replied to the customer from the console (" + rep.MessageID + "):\n\n" + body, At: s.cfg.Now()}
		if _, err := s.cfg.Tickets.AddNote(lctx, ticket.TicketID, note); err != nil {
			s.log.Warn("console: reply sent; the ticket note failed", "ticket", ticket.TicketID, "err", err)
		}
	}
	s.wakeWatch(lctx)
	s.log.Info("console: a person's reply sent", "user", user, "reply_message_id", rep.MessageID)
	return nil
}
