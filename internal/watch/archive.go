package watch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"

	"triage/internal/ledger"
)

// ArchiveOptions bound what Archive reads.
type ArchiveOptions struct {
	// Since keeps the messages the server received on or after this day
	// (IMAP SEARCH SINCE, by internal date); zero: every message.
	Since time.Time
	// Limit keeps the newest Limit of them (the highest UIDs); at least 1.
	Limit int
}

// Archived is one message Archive read; Err says why it could not be read
// (a message over Config.MaxMessageBytes is named, never fetched).
type Archived struct {
	Loc ledger.Loc
	Raw []byte
	Err error
}

// Archive reads past mail of the mailbox for a what-if replay and changes
// nothing on the server: it connects and logs in as Run does, opens the
// mailbox read-only (EXAMINE), searches it, and fetches the chosen
// messages one at a time with BODY.PEEK (no \Seen), oldest first, handing
// each to yield before the next is fetched. No flag, keyword, move or
// append; the ledger is not used. An error from yield stops the read and is
// returned.
func (w *Watcher) Archive(ctx context.Context, opts ArchiveOptions, yield func(Archived) error) error {
	if opts.Limit < 1 {
		return errors.New("watch: Archive: Limit must be at least 1")
	}
	c, err := w.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	sel, err := c.Select(w.cfg.Mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return fmt.Errorf("watch: examine %s: %w", w.cfg.Mailbox, err)
	}
	crit := &imap.SearchCriteria{UID: []imap.UIDSet{{imap.UIDRange{Start: 1, Stop: 0}}}, Since: opts.Since}
	data, err := c.UIDSearch(crit, nil).Wait()
	if err != nil {
		return fmt.Errorf("watch: search %s: %w", w.cfg.Mailbox, err)
	}
	uids := slices.DeleteFunc(data.AllUIDs(), func(u imap.UID) bool { return u == 0 })
	slices.Sort(uids)
	uids = slices.Compact(uids)
	if len(uids) > opts.Limit {
		uids = uids[len(uids)-opts.Limit:]
	}
	for _, uid := range uids {
		if err := ctx.Err(); err != nil {
			return err
		}
		a := Archived{Loc: ledger.Loc{Account: w.cfg.Account, Mailbox: w.cfg.Mailbox, UIDValidity: sel.UIDValidity, UID: uint32(uid)}}
		_, size, ok, err := fetchHead(c, uid, w.cfg.MaxMessageBytes)
		if err != nil {
			return err
		}
		if !ok {
			continue // expunged since the search
		}
		if size > w.cfg.MaxMessageBytes {
			a.Err = fmt.Errorf("watch: %s: %d bytes, over max_message_bytes (%d); not read", a.Loc, size, w.cfg.MaxMessageBytes)
		} else if a.Raw, ok, err = fetchBody(c, uid); err != nil {
			return err
		} else if !ok {
			continue
		}
		if err := yield(a); err != nil {
			return err
		}
	}
	if err := c.Logout().Wait(); err != nil {
		w.log.Debug("imap logout", "err", err)
	}
	return nil
}
