package replies

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/trace"
)

// LedgerSender is the reply memory of `triage watch`: a mail.Sender that
// keeps the replies table's promise: the rendered reply (with its
// deterministic Message-ID) is written to the table before the submission
// and marked sent after it, and a key that already has a reply is never
// submitted again. The reply limits are checked
// there too, atomically with the write: against the From of the message the
// reply answers (mail.Reply.InboundFrom) and against the address it actually
// goes to. A staff notice (mail.Reply.Notice) is recorded as a notice: it
// never counts against the reply limits, only against the notice bounds
// (LedgerSenderConfig.Notices), per customer and per hour.
type LedgerSender struct {
	replies *Store
	next    mail.Sender
	domain  string
	limits  Limits
	notices triage.NoticeLimits
	inbox   triage.Inbox
	now     func() time.Time
	log     *slog.Logger
	met     *trace.Metrics
}

var _ mail.Sender = (*LedgerSender)(nil)

// LedgerSenderConfig configures NewLedgerSender; Replies, Next and Domain
// are required.
type LedgerSenderConfig struct {
	Replies *Store      // the ledger's (ledger.Ledger.Replies)
	Next    mail.Sender // e.g. *mail.SMTP or *Outbox
	Domain  string      // for mail.MessageIDFor
	// Limits are the watcher's reply limits, as given (zero fields: no
	// limit; watch.Limits.Replies fills in the watcher's defaults).
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
	if cfg.Replies == nil || cfg.Next == nil || cfg.Domain == "" {
		return nil, errors.New("watch: sender: Replies, Next and Domain are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &LedgerSender{replies: cfg.Replies, next: cfg.Next, domain: cfg.Domain, limits: cfg.Limits, notices: cfg.Notices, inbox: cfg.Inbox,
		now: cfg.Now, log: cfg.Logger, met: cfg.Metrics}, nil
}

// ErrReplyUnconfirmed means an earlier submission of this reply may or may
// not have gone out; it is left for a person and never submitted again.
var ErrReplyUnconfirmed = errors.New("watch: an earlier reply to this message is unconfirmed; not sending twice")

// Send renders r, records it as pending, submits it and marks it sent. A
// reply already sent for r.Key is not submitted again: Send returns its
// receipt. A reply (or notice) over a limit is not recorded nor sent: the
// error is a triage.Limited (*LimitError).
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
	rec, lim, what := Reply{Key: r.Key, MessageID: r.MessageID, To: r.To, InboundFrom: r.InboundFrom, Raw: raw,
		Account: s.inbox.Account, Mailbox: s.inbox.Mailbox}, s.limits, "reply"
	if r.Notice {
		// A notice counts against the customer it is about, under the
		// notice bounds alone.
		rec.Kind, lim, what = KindNotice, Limits{Notices: s.notices}, "staff notice"
	}
	err = s.replies.PutPendingWithin(ctx, rec, lim)
	var le *LimitError
	if errors.As(err, &le) {
		s.log.WarnContext(ctx, what+" over a limit: not sent, left for a person", "key", r.Key, "to", r.To, "reason", le.Reason, "address", le.Address)
		return triage.Receipt{}, fmt.Errorf("watch: %s to %s not sent: %w", what, r.To, err)
	}
	if errors.Is(err, ErrReplyExists) {
		prev, gerr := s.replies.GetReply(ctx, r.Key)
		if gerr == nil && prev.State == ReplySent {
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
			if derr := s.replies.DropPending(lctx, r.Key); derr != nil {
				return triage.Receipt{}, errors.Join(err, derr)
			}
			return triage.Receipt{}, err
		}
		s.log.WarnContext(ctx, "reply submission ended ambiguously; left pending for a person", "key", r.Key, "reply_message_id", r.MessageID, "err", err)
		return triage.Receipt{}, err
	}
	if err := s.replies.MarkSent(context.WithoutCancel(ctx), r.Key); err != nil {
		return triage.Receipt{}, fmt.Errorf("watch: sender: reply %s was sent but not recorded: %w", r.MessageID, err)
	}
	if rc.MessageID == "" {
		rc.MessageID = r.MessageID
	}
	return rc, nil
}

// draft records a rendered draft in the replies table (one per inbound key, like a
// reply) and sends nothing: the watcher appends it to the Drafts folder once
// the pipeline is done. A key that already has a draft gets that draft's
// receipt; one that has a reply gets the reply's (never a draft after a
// reply, whatever the mode says now).
func (s *LedgerSender) draft(ctx context.Context, r *mail.Reply, raw []byte) (triage.Receipt, error) {
	err := s.replies.PutPending(ctx, Reply{Key: r.Key, MessageID: r.MessageID, To: r.To, InboundFrom: r.InboundFrom, Raw: raw, Kind: KindDraft,
		Account: s.inbox.Account, Mailbox: s.inbox.Mailbox})
	if errors.Is(err, ErrReplyExists) {
		prev, gerr := s.replies.GetReply(ctx, r.Key)
		switch {
		case gerr != nil:
			return triage.Receipt{}, errors.Join(err, gerr)
		case prev.Kind == KindDraft:
			s.log.InfoContext(ctx, "draft already recorded; not drafting again", "key", r.Key, "reply_message_id", prev.MessageID)
			return triage.Receipt{MessageID: prev.MessageID, To: prev.To, Drafted: true}, nil
		case prev.State == ReplySent:
			return triage.Receipt{MessageID: prev.MessageID, To: prev.To}, nil
		}
		return triage.Receipt{}, ErrReplyUnconfirmed
	}
	if err != nil {
		return triage.Receipt{}, err
	}
	return triage.Receipt{MessageID: r.MessageID, To: r.To, Drafted: true}, nil
}

// SentReply and RepliesSince make the replies table the reply history of
// the pipeline (processor.History), for breaking auto-reply loops.
func (s *LedgerSender) SentReply(ctx context.Context, messageID string) (bool, error) {
	return s.replies.SentReply(ctx, messageID)
}

// ReplyRaw returns the rendered reply or draft with this Message-ID from
// the replies table; ok is false when triage wrote none by that ID.
func (s *LedgerSender) ReplyRaw(ctx context.Context, messageID string) ([]byte, bool, error) {
	r, err := s.replies.ReplyByMessageID(ctx, messageID)
	if errors.Is(err, ErrNotFound) || err == nil && r.Kind == KindNotice {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return r.Raw, true, nil
}

// RepliesSince counts the table's replies to (or answering) addr since t.
func (s *LedgerSender) RepliesSince(ctx context.Context, addr string, since time.Time) (int, error) {
	return s.replies.RepliesSince(ctx, addr, since)
}
