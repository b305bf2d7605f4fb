package watch

import (
	"context"
	"fmt"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"triage/internal/replies"
)

// resolvePending settles this inbox's replies a crash left between
// "rendered" and "sent": found in the Sent folder means sent; otherwise a
// person must look. Nothing is ever submitted again. A reply whose message
// a daemon holds a live claim on is left alone: that daemon may be sending
// it at this moment.
func (w *Watcher) resolvePending(ctx context.Context, c *imapclient.Client) error {
	pending, err := w.cfg.Ledger.Replies().Orphaned(ctx, w.cfg.Account, w.cfg.Mailbox, replies.ReplyPending)
	if err != nil {
		return w.ledgerErr(err)
	}
	if len(pending) == 0 {
		return nil
	}
	sentOK := false
	if w.sent != "" {
		if _, err := c.Select(w.sent, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
			w.log.Warn("cannot open the Sent folder to confirm pending replies", "folder", w.sent, "err", err)
		} else {
			sentOK = true
		}
	}
	for _, r := range pending {
		found := false
		if sentOK {
			if found, err = holdsMessageID(c, w.sent, r.MessageID); err != nil {
				return err
			}
		}
		if found {
			err = w.cfg.Ledger.Replies().MarkSent(ctx, r.Key)
			w.log.Info("pending reply found in the Sent folder; recorded as sent", "message_id", r.MessageID, "key", r.Key)
		} else {
			err = w.cfg.Ledger.Replies().MarkReplyNeedsHuman(ctx, r.Key)
			w.log.Warn("pending reply could not be confirmed; left for a person (not sent again)", "message_id", r.MessageID, "key", r.Key, "to", r.To)
		}
		if err != nil {
			return w.ledgerErr(err)
		}
	}
	if sentOK {
		if err := c.Unselect().Wait(); err != nil {
			return fmt.Errorf("watch: unselect: %w", err)
		}
	}
	return nil
}
