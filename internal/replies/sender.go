package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/ledger"
	"triage/internal/processor"
	"triage/internal/replies"
	"triage/internal/trace"
)

// LedgerSender is a mail.Sender that keeps the ledger's promise: the
// rendered reply (with its deterministic Message-ID) is written to the
// ledger before the submission and marked sent after it, and a key that
// already has a reply is never submitted again. The reply limits are checked
// there too, atomically with the write: against the From of the message the
// reply answers (mail.Reply.InboundFrom) and against the address it actually
// goes to. A staff notice (mail.Reply.Notice) is recorded as a notice: it
// never counts against the reply limits, only against the notice bounds
// (LedgerSenderConfig.Notices), per customer and per hour.
type LedgerSender struct {
	ledger  *ledger.Ledger
	next    mail.Sender
	domain  string
	limits  replies.Limits
	notices triage.NoticeLimits
	inbox   triage.Inbox
	now     func() time.Time
	log     *slog.Logger
	met     *trace.Metrics
}

var (
	_ mail.Sender       = (*LedgerSender)(nil)
	_ processor.History = (*LedgerSender)(nil)
)

// LedgerSenderConfig configures NewLedgerSender; Ledger, Next and Domain
// are required.
type LedgerSenderConfig struct {
	Ledger *ledger.Ledger
	Next   mail.Sender // e.g. *mail.SMTP or *mail.Outbox
	Domain string      // for mail.MessageIDFor
	// Limits are the watcher's reply limits (Config.Limits; zero fields
	// take the defaults).
	Limits Limits
	// Notices bound the staff notices (zero fields: no bound).
	Notices triage.NoticeLimits
	// Inbox is the inbox whose messages the replies answer: each reply
	// and draft is recorded under it, so daemons and inboxes sharing a
	// store each recover only their own.
	Inbox   triage.Inbox
	Now     func() time.Time
	Logger  *slog.Logger
	Metrics *trace.Metrics // optional: counts submission errors as "smtp"
}

// NewLedgerSender checks cfg.
func NewLedgerSender(cfg LedgerSenderConfig) (*LedgerSender, error) {
	if cfg.Ledger == nil || cfg.Next == nil || cfg.Domain == "" {
		return nil, errors.New("watch: sender: Ledger, Next and Domain are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = discard()
	}
	return &LedgerSender{ledger: cfg.Ledger, next: cfg.Next, domain: cfg.Domain, limits: cfg.Limits.ledger(), notices: cfg.Notices, inbox: cfg.Inbox,
		now: cfg.Now, log: cfg.Logger, met: cfg.Metrics}, nil
}

// ErrReplyUnconfirmed means an earlier submission of this reply may or may
// not have gone out; it is left for a person and never submitted again.
var ErrReplyUnconfirmed = errors.New("watch: an earlier reply to this message is unconfirmed; not sending twice")

// Send renders r, records it as pending, submits it and marks it sent. A
// reply already sent for r.Key is not submitted again: Send returns its
// receipt. A reply (or notice) over a limit is not recorded nor sent: the
// error is a triage.Limited (*replies.LimitError).
func (s *LedgerSender) Send(ctx context.Context, r *mail.Reply) (triage.Receipt, error) {
	if r.Key == "" {
		return triage.Receipt{}, errors.New("watch: sender: reply has no inbound key; refusing to send without a ledger entry")
	}
	if r.MessageID == "" {
		r.MessageID = mail.MessageIDFor(r.Key, s.domain)
	}
	if r.Date.IsZero() {
		r.Date = s.now()
	}
	raw, err := mail.Render(r)
	if err != nil {
		return triage.Receipt{}, err
	}
	if r.Draft {
		return s.draft(ctx, r, raw)
	}
	rec, lim, what := replies.Reply{Key: r.Key, MessageID: r.MessageID, To: r.To, InboundFrom: r.InboundFrom, Raw: raw,
		Account: s.inbox.Account, Mailbox: s.inbox.Mailbox}, s.limits, "reply"
	if r.Notice {
		// A notice counts against the customer it is about, under the
		// notice bounds alone.
		rec.Kind, lim, what = replies.KindNotice, replies.Limits{Notices: s.notices}, "staff notice"
	}
	err = s.ledger.Replies().PutPendingWithin(ctx, rec, lim)
	var le *replies.LimitError
	if errors.As(err, &le) {
		s.log.WarnContext(ctx, what+" over a limit: not sent, left for a person", "key", r.Key, "to", r.To, "reason", le.Reason, "address", le.Address)
		return triage.Receipt{}, fmt.Errorf("watch: %s to %s not sent: %w", what, r.To, err)
	}
	if errors.Is(err, replies.ErrReplyExists) {
		prev, gerr := s.ledger.Replies().GetReply(ctx, r.Key)
		if gerr == nil && prev.State == replies.ReplySent {
			s.log.InfoContext(ctx, "reply already sent; not sending again", "key", r.Key, "reply_message_id", prev.MessageID)
			return triage.Receipt{MessageID: prev.MessageID, To: prev.To}, nil
		}
		return triage.Receipt{}, ErrReplyUnconfirmed
	}
	if err != nil {
		return triage.Receipt{}, err
	}
	rc, err := s.next.Send(ctx, r)
	if err != nil {
		s.met.Error("smtp")
		// The ledger must survive a cancelled ctx.
		lctx := context.WithoutCancel(ctx)
		if mail.NotSubmitted(err) {
			if derr := s.ledger.Replies().DropPending(lctx, r.Key); derr != nil {
				return triage.Receipt{}, errors.Join(err, derr)
			}
			return triage.Receipt{}, err
		}
		s.log.WarnContext(ctx, "reply submission ended ambiguously; left pending for a person", "key", r.Key, "reply_message_id", r.MessageID, "err", err)
		return triage.Receipt{}, err
	}
	if err := s.ledger.Replies().MarkSent(context.WithoutCancel(ctx), r.Key); err != nil {
		return triage.Receipt{}, fmt.Errorf("watch: sender: reply %s was sent but not recorded: %w", r.MessageID, err)
	}
	if rc.MessageID == "" {
		rc.MessageID = r.MessageID
	}
	return rc, nil
}

// SentReply and RepliesSince make the ledger the reply history of the
// pipeline (processor.History), for breaking auto-reply loops.
func (s *LedgerSender) SentReply(ctx context.Context, messageID string) (bool, error) {
	return s.ledger.Replies().SentReply(ctx, messageID)
}

// ReplyRaw returns the rendered reply or draft with this Message-ID from
// the ledger; ok is false when triage wrote none by that ID.
func (s *LedgerSender) ReplyRaw(ctx context.Context, messageID string) ([]byte, bool, error) {
	r, err := s.ledger.Replies().ReplyByMessageID(ctx, messageID)
	if errors.Is(err, replies.ErrNotFound) || err == nil && r.Kind == replies.KindNotice {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return r.Raw, true, nil
}

// RepliesSince counts the ledger's replies to (or answering) addr since t.
func (s *LedgerSender) RepliesSince(ctx context.Context, addr string, since time.Time) (int, error) {
	return s.ledger.Replies().RepliesSince(ctx, addr, since)
}
