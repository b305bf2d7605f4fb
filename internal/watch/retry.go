package watch

import (
	"context"
	"errors"
	"fmt"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"triage/internal/ledger"
)

// requeue runs before every pass: the failed messages a person asked to
// retry (triage console, ledger.RequestRetry) lose our keyword and move
// from the failed folder back to the watched mailbox, where this pass finds
// them as new mail; their old entries become retried. A message no longer
// in the failed folder (a person moved or deleted it) is failed again.
func (w *Watcher) requeue(ctx context.Context, c *imapclient.Client) error {
	reqs, err := w.cfg.Ledger.RetryRequests(ctx, w.cfg.Account)
	if err != nil || len(reqs) == 0 {
		return w.ledgerErr(err)
	}
	folder := w.cfg.FailedFolder
	if _, err := c.Select(folder, nil).Wait(); err != nil {
		w.log.Warn("cannot open the failed folder to retry messages; next pass", "folder", folder, "err", err)
		return nil
	}
	defer func() {
		if err := c.Unselect().Wait(); err != nil {
			w.log.Debug("imap unselect", "err", err)
		}
	}()
	for _, e := range reqs {
		crit := &imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-Id", Value: e.MessageID}}}
		data, err := c.UIDSearch(crit, nil).Wait()
		if err != nil {
			return fmt.Errorf("watch: search %s: %w", folder, err)
		}
		uids := data.AllUIDs()
		if len(uids) == 0 {
			w.log.Warn("message to retry is no longer in the failed folder; left failed", "folder", folder, "message_id", e.MessageID)
			if err := w.cfg.Ledger.EndRetry(ctx, e.Loc, false); err != nil {
				return w.ledgerErr(err)
			}
			continue
		}
		set := imap.UIDSetNum(uids...)
		// Without our keyword the pass's search finds it; a server that
		// refuses keywords never had it (the ledger then decides).
		err = c.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsDel, Silent: true, Flags: []imap.Flag{imap.Flag(w.cfg.Keyword)}}, nil).Close()
		if err != nil && !isNo(err) {
			return fmt.Errorf("watch: unflag uid %v in %s: %w", uids, folder, err)
		}
		if folder != w.cfg.Mailbox {
			if _, err := c.Move(set, w.cfg.Mailbox).Wait(); err != nil {
				return fmt.Errorf("watch: move %v from %s to %s: %w", uids, folder, w.cfg.Mailbox, err)
			}
		}
		w.log.Info("message moved back to be retried", "from", folder, "to", w.cfg.Mailbox, "message_id", e.MessageID)
		if err := w.cfg.Ledger.EndRetry(ctx, e.Loc, true); err != nil && !errors.Is(err, ledger.ErrNotFound) {
			return w.ledgerErr(err)
		}
	}
	return nil
}
