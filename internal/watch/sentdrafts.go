package watch

import (
	"context"
	"fmt"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"triage/internal/replies"
)

// settleSentDrafts runs before every pass: a draft a person sent from the
// console (replies.DraftSentByPerson) leaves the Drafts folder, so nobody
// sends it a second time from a mail client, and the message as sent is
// filed in the Sent folder (when there is one) as triage files its
// own replies; then the ledger records it sent. A crash in between repeats
// only what is missing: the copy is looked up by Message-ID both times.
func (w *Watcher) settleSentDrafts(ctx context.Context, c *imapclient.Client) error {
	l := w.cfg.Ledger
	sent, err := l.Replies().Orphaned(ctx, w.cfg.Account, w.cfg.Mailbox, replies.DraftSentByPerson)
	if err != nil || len(sent) == 0 {
		return w.ledgerErr(err)
	}
	b := &box{folders: map[string]bool{}}
	if err := w.removeFrom(c, b, w.drafts, sent); err != nil {
		return err
	}
	if w.sent != "" {
		if err := w.ensureFolder(c, b, w.sent); err != nil {
			return err
		}
		filed, err := w.holding(c, w.sent, sent)
		if err != nil {
			return err
		}
		for _, r := range sent {
			if filed[r.MessageID] {
				continue
			}
			r, err := l.Replies().GetReply(ctx, r.Key) // with its bytes
			if err != nil {
				return w.ledgerErr(err)
			}
			if err := appendMessage(c, w.sent, r.Raw, &imap.AppendOptions{Flags: []imap.Flag{imap.FlagSeen}, Time: r.SentAt}, "append"); err != nil {
				return err
			}
		}
	}
	for _, r := range sent {
		w.log.Info("draft sent from the console: removed from the Drafts folder", "folder", w.drafts, "reply_message_id", r.MessageID)
		if err := l.Replies().SettleSentDraft(ctx, r.Key); err != nil {
			return w.ledgerErr(err)
		}
	}
	return nil
}

// removeFrom deletes the messages of folder with the Message-IDs of rs.
func (w *Watcher) removeFrom(c *imapclient.Client, b *box, folder string, rs []replies.Reply) error {
	if err := w.ensureFolder(c, b, folder); err != nil {
		return err
	}
	if _, err := c.Select(folder, nil).Wait(); err != nil {
		return fmt.Errorf("watch: select %s: %w", folder, err)
	}
	var uids []imap.UID
	for _, r := range rs {
		crit := &imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-Id", Value: r.MessageID}}}
		data, err := c.UIDSearch(crit, nil).Wait()
		if err != nil {
			return fmt.Errorf("watch: search %s: %w", folder, err)
		}
		uids = append(uids, data.AllUIDs()...)
	}
	if len(uids) > 0 {
		set := imap.UIDSetNum(uids...)
		if err := c.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
			return fmt.Errorf("watch: delete from %s: %w", folder, err)
		}
		var expunge *imapclient.ExpungeCommand
		if c.Caps().Has(imap.CapUIDPlus) {
			expunge = c.UIDExpunge(set) // only ours, not what a person marked deleted
		} else {
			expunge = c.Expunge()
		}
		if err := expunge.Close(); err != nil {
			return fmt.Errorf("watch: expunge %s: %w", folder, err)
		}
	}
	if err := c.Unselect().Wait(); err != nil {
		return fmt.Errorf("watch: unselect: %w", err)
	}
	return nil
}

// holding reports which Message-IDs of rs folder holds.
func (w *Watcher) holding(c *imapclient.Client, folder string, rs []replies.Reply) (map[string]bool, error) {
	if _, err := c.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		return nil, fmt.Errorf("watch: examine %s: %w", folder, err)
	}
	out := map[string]bool{}
	for _, r := range rs {
		ok, err := holdsMessageID(c, folder, r.MessageID)
		if err != nil {
			return nil, err
		}
		out[r.MessageID] = ok
	}
	if err := c.Unselect().Wait(); err != nil {
		return nil, fmt.Errorf("watch: unselect: %w", err)
	}
	return out, nil
}

// removeRejectedDrafts runs before every pass: the copy of a draft a
// person rejected in the console leaves the Drafts folder, so nobody sends
// it from a mail client; the ledger then records it removed. Found by
// Message-ID, so a crash in between only repeats the search.
func (w *Watcher) removeRejectedDrafts(ctx context.Context, c *imapclient.Client) error {
	l := w.cfg.Ledger
	rejected, err := l.Replies().RejectedInDrafts(ctx, w.cfg.Account, w.cfg.Mailbox)
	if err != nil || len(rejected) == 0 {
		return w.ledgerErr(err)
	}
	if err := w.removeFrom(c, &box{folders: map[string]bool{}}, w.drafts, rejected); err != nil {
		return err
	}
	for _, r := range rejected {
		w.log.Info("draft rejected in the console: removed from the Drafts folder", "folder", w.drafts, "reply_message_id", r.MessageID)
		if err := l.Replies().MarkDraftRemoved(ctx, r.Key); err != nil {
			return w.ledgerErr(err)
		}
	}
	return nil
}

// filePersonReplies runs before every pass: a reply a person sent from the
// console is filed in the Sent folder (when there is one, and saving sent
// replies is on) as triage files its own, once: looked up by Message-ID
// first, so a crash in between never files it twice.
func (w *Watcher) filePersonReplies(ctx context.Context, c *imapclient.Client) error {
	if w.sent == "" || w.cfg.NoSaveSent {
		return nil
	}
	l := w.cfg.Ledger
	unfiled, err := l.Replies().Unfiled(ctx, w.cfg.Account, w.cfg.Mailbox)
	if err != nil || len(unfiled) == 0 {
		return w.ledgerErr(err)
	}
	b := &box{folders: map[string]bool{}}
	if err := w.ensureFolder(c, b, w.sent); err != nil {
		return err
	}
	filed, err := w.holding(c, w.sent, unfiled)
	if err != nil {
		return err
	}
	for _, r := range unfiled {
		if !filed[r.MessageID] {
			r, err := l.Replies().GetReply(ctx, r.Key) // with its bytes
			if err != nil {
				return w.ledgerErr(err)
			}
			if err := appendMessage(c, w.sent, r.Raw, &imap.AppendOptions{Flags: []imap.Flag{imap.FlagSeen}, Time: r.SentAt}, "append"); err != nil {
				return err
			}
			w.log.Info("a person's reply from the console filed in the Sent folder", "folder", w.sent, "reply_message_id", r.MessageID)
		}
		if err := l.Replies().MarkAppended(ctx, r.Key); err != nil {
			return w.ledgerErr(err)
		}
	}
	return nil
}
