package watch

import (
	"context"
	"errors"
	"fmt"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/replies"
)

// DefaultDraftsFolder receives drafts (reply mode draft) when no folder is
// configured and the server marks none \\Drafts.
const DefaultDraftsFolder = "Drafts"

// draft records a rendered draft in the ledger (one per inbound key, like a
// reply) and sends nothing: the watcher appends it to the Drafts folder once
// the pipeline is done. A key that already has a draft gets that draft's
// receipt; one that has a reply gets the reply's (never a draft after a
// reply, whatever the mode says now).
func (s *LedgerSender) draft(ctx context.Context, r *mail.Reply, raw []byte) (triage.Receipt, error) {
	err := s.ledger.Replies().PutPending(ctx, replies.Reply{Key: r.Key, MessageID: r.MessageID, To: r.To, InboundFrom: r.InboundFrom, Raw: raw, Kind: replies.KindDraft,
		Account: s.inbox.Account, Mailbox: s.inbox.Mailbox})
	if errors.Is(err, replies.ErrReplyExists) {
		prev, gerr := s.ledger.Replies().GetReply(ctx, r.Key)
		switch {
		case gerr != nil:
			return triage.Receipt{}, errors.Join(err, gerr)
		case prev.Kind == replies.KindDraft:
			s.log.InfoContext(ctx, "draft already recorded; not drafting again", "key", r.Key, "reply_message_id", prev.MessageID)
			return triage.Receipt{MessageID: prev.MessageID, To: prev.To, Drafted: true}, nil
		case prev.State == replies.ReplySent:
			return triage.Receipt{MessageID: prev.MessageID, To: prev.To}, nil
		}
		return triage.Receipt{}, ErrReplyUnconfirmed
	}
	if err != nil {
		return triage.Receipt{}, err
	}
	return triage.Receipt{MessageID: r.MessageID, To: r.To, Drafted: true}, nil
}

// storeDraft appends a recorded draft to the Drafts folder, flagged \Draft
// (and \Seen: nobody needs to be told twice), then records it stored. The
// ledger row came first, so a crash before the record is settled by
// resolveDrafts, which looks the draft up before appending it again.
func (w *Watcher) storeDraft(ctx context.Context, c *imapclient.Client, b *box, r replies.Reply) error {
	b.imap.Lock() // a pass's workers share the connection
	defer b.imap.Unlock()
	if err := w.ensureFolder(c, b, w.drafts); err != nil {
		return err
	}
	if err := appendMessage(c, w.drafts, r.Raw, &imap.AppendOptions{Flags: []imap.Flag{imap.FlagDraft, imap.FlagSeen}, Time: r.Created}, "append draft"); err != nil {
		return err
	}
	w.log.InfoContext(ctx, "draft stored", "folder", w.drafts, "reply_message_id", r.MessageID, "to", r.To)
	return w.ledgerErr(w.cfg.Ledger.Replies().MarkDraftStored(context.WithoutCancel(ctx), r.Key))
}

// resolveDrafts settles this inbox's drafts a crash left recorded but
// perhaps not stored, whose writer is gone (no daemon holds a claim on their
// message): found in the Drafts folder (by Message-ID) means stored,
// otherwise the draft is appended now. A draft harms nobody, yet it is never
// stored twice.
func (w *Watcher) resolveDrafts(ctx context.Context, c *imapclient.Client) error {
	pending, err := w.cfg.Ledger.Replies().Orphaned(ctx, w.cfg.Account, w.cfg.Mailbox, replies.DraftPending)
	if err != nil {
		return w.ledgerErr(err)
	}
	if len(pending) == 0 {
		return nil
	}
	b := &box{folders: map[string]bool{}}
	if err := w.ensureFolder(c, b, w.drafts); err != nil {
		return err
	}
	if _, err := c.Select(w.drafts, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		return fmt.Errorf("watch: examine %s: %w", w.drafts, err)
	}
	for _, r := range pending {
		stored, err := holdsMessageID(c, w.drafts, r.MessageID)
		if err != nil {
			return err
		}
		if stored {
			w.log.Info("pending draft found in the Drafts folder; recorded as stored", "message_id", r.MessageID, "key", r.Key)
			if err := w.cfg.Ledger.Replies().MarkDraftStored(ctx, r.Key); err != nil {
				return w.ledgerErr(err)
			}
			continue
		}
		w.log.Info("pending draft not in the Drafts folder; storing it", "message_id", r.MessageID, "key", r.Key)
		if r, err = w.cfg.Ledger.Replies().GetReply(ctx, r.Key); err != nil { // with its bytes
			return w.ledgerErr(err)
		}
		if err := w.storeDraft(ctx, c, b, r); err != nil {
			return err
		}
	}
	if err := c.Unselect().Wait(); err != nil {
		return fmt.Errorf("watch: unselect: %w", err)
	}
	return nil
}
