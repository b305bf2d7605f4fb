package mail

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Index is an outbox index kept outside the directory (the store of
// triage process --store, *ledger.Ledger): the replies by Message-ID (as
// indexKey writes it) with their file and recipient. With one, an Outbox
// never lists or reads its directory for replies, nor writes IndexFile:
// its cost does not grow with the replies it holds.
type Index interface {
	OutboxPath(ctx context.Context, id string) (path string, ok bool, err error)
	AddOutboxReply(ctx context.Context, id, to, path string, date time.Time) error
	OutboxRepliesSince(ctx context.Context, to string, since time.Time) (int, error)
}

// UseIndex keeps the outbox's index of replies in x instead of IndexFile.
// Call it before the first Send. Drafts are still found by the names in
// the drafts directory.
func (o *Outbox) UseIndex(x Index) { o.ext = x }

// indexKey is a Message-ID as the Index keys it: bracketed, lower case.
func indexKey(messageID string) (string, bool) {
	id, ok := ValidMsgID(messageID)
	if !ok {
		return "", false
	}
	return "<" + strings.ToLower(id) + ">", true
}

// extExisting is existing with an Index: a reply's file from the index
// (recorded before the file is written: a file that is not there was never
// written, and is written now), a draft's from the drafts directory.
func (o *Outbox) extExisting(ctx context.Context, draft bool, messageID string) (string, bool, error) {
	if draft {
		if err := o.loadDrafts(); err != nil {
			return "", false, err
		}
		o.index.mu.Lock()
		defer o.index.mu.Unlock()
		p, ok := o.index.files[nameKey(true, sanitize(messageID))]
		return p, ok, nil
	}
	key, ok := indexKey(messageID)
	if !ok {
		return "", false, nil
	}
	p, ok, err := o.ext.OutboxPath(ctx, key)
	if err != nil || !ok {
		return "", false, err
	}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	return p, true, nil
}

// loadDrafts lists the drafts directory once.
func (o *Outbox) loadDrafts() error {
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	if o.index.loaded {
		return nil
	}
	dir := filepath.Join(o.dir, DraftsDir)
	names, err := listNames(dir)
	if err != nil {
		return fmt.Errorf("mail: outbox: %w", err)
	}
	o.index.files = map[string]string{}
	for _, name := range names {
		if id := idOfName(name); id != "" {
			o.index.files[nameKey(true, id)] = filepath.Join(dir, name)
		}
	}
	o.index.loaded = true
	return nil
}
