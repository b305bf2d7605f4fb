package watch

import (
	"context"
	"fmt"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"triage/internal/replies"
)

// DefaultDraftsFolder receives drafts (reply mode draft) when no folder is
// configured and the server marks none \\Drafts.
const DefaultDraftsFolder = "Drafts"

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
