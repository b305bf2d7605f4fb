package watch

import (
	"context"
	"errors"
	"fmt"

	"github.com/emersion/go-imap/v2"
)

// ErrNoSentFolder: the server has no Sent folder to look in (none
// configured, none marked \Sent, none named Sent).
var ErrNoSentFolder = errors.New("watch: no Sent folder (imap.sent_folder, or a folder the server marks \\Sent)")

// MaxInSent bounds the Message-IDs one InSent looks up.
const MaxInSent = 100

// InSent reports which of messageIDs the Sent folder holds (how many
// copies of each), read-only (EXAMINE, SEARCH HEADER Message-ID): for a
// person settling a reply that could not be confirmed (triage console).
// It opens a connection of its own, as the configuration says, and closes
// it.
func (w *Watcher) InSent(ctx context.Context, messageIDs []string) (map[string]int, error) {
	if len(messageIDs) > MaxInSent {
		return nil, fmt.Errorf("watch: InSent: %d Message-IDs, at most %d", len(messageIDs), MaxInSent)
	}
	c, err := w.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err := w.findFolders(c); err != nil {
		return nil, err
	}
	if w.sent == "" {
		return nil, ErrNoSentFolder
	}
	if _, err := c.Select(w.sent, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		return nil, fmt.Errorf("watch: examine %s: %w", w.sent, err)
	}
	out := map[string]int{}
	for _, id := range messageIDs {
		crit := &imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-Id", Value: id}}}
		data, err := c.UIDSearch(crit, nil).Wait()
		if err != nil {
			return nil, fmt.Errorf("watch: search %s: %w", w.sent, err)
		}
		out[id] = len(data.AllUIDs())
	}
	if err := c.Logout().Wait(); err != nil {
		w.log.Debug("imap logout", "err", err)
	}
	return out, nil
}
