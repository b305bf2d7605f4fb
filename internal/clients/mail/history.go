package mail

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// sentIndex is what an Outbox remembers of the replies in its directory:
// their Message-IDs, recipients and dates. It is read from the .eml files
// once, at first use (headers only), and kept up to date by Send, so a run of
// `triage process` sees the replies of earlier runs into the same outbox.
// Drafts are not replies that went out and are not indexed.
type sentIndex struct {
	mu     sync.Mutex
	loaded bool
	ids    map[string]bool
	sent   []sentEntry
}

type sentEntry struct {
	to   string
	date time.Time
}

// SentReply reports whether messageID is the Message-ID of a reply in this
// outbox (drafts excluded).
func (o *Outbox) SentReply(ctx context.Context, messageID string) (bool, error) {
	id, ok := ValidMsgID(messageID)
	if !ok {
		return false, nil
	}
	if err := o.loadIndex(ctx); err != nil {
		return false, err
	}
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	return o.index.ids[strings.ToLower(id)], nil
}

// RepliesSince counts the replies in this outbox to addr dated at or after
// since (drafts excluded).
func (o *Outbox) RepliesSince(ctx context.Context, addr string, since time.Time) (int, error) {
	if err := o.loadIndex(ctx); err != nil {
		return 0, err
	}
	addr = strings.ToLower(strings.TrimSpace(addr))
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	n := 0
	for _, e := range o.index.sent {
		if e.to == addr && !e.date.Before(since) {
			n++
		}
	}
	return n, nil
}

// remember adds a reply written by Send.
func (o *Outbox) remember(messageID, to string, date time.Time) {
	id, ok := ValidMsgID(messageID)
	if !ok {
		return
	}
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	if !o.index.loaded {
		return // the first lookup reads it from disk
	}
	o.index.add(id, to, date)
}

func (x *sentIndex) add(id, to string, date time.Time) {
	id = strings.ToLower(id)
	if x.ids[id] {
		return
	}
	x.ids[id] = true
	x.sent = append(x.sent, sentEntry{to: strings.ToLower(to), date: date})
}

// loadIndex reads the header of every .eml file in the outbox directory
// once. A file that is not a readable message is skipped: the index only
// ever adds what it can read.
func (o *Outbox) loadIndex(ctx context.Context) error {
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	if o.index.loaded {
		return nil
	}
	names, err := filepath.Glob(filepath.Join(o.dir, "*.eml"))
	if err != nil {
		return fmt.Errorf("mail: outbox: %w", err)
	}
	o.index.ids = map[string]bool{}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("mail: outbox: read replies: %w", err)
		}
		if strings.HasPrefix(filepath.Base(name), ".") {
			continue // a temporary file being written
		}
		id, to, date, ok := readReplyHeader(name)
		if ok {
			o.index.add(id, to, date)
		}
	}
	o.index.loaded = true
	return nil
}

// readReplyHeader reads Message-ID, To and Date of one outbox file.
func readReplyHeader(name string) (id, to string, date time.Time, ok bool) {
	h, err := readHeader(name)
	if err != nil {
		return "", "", time.Time{}, false
	}
	id, ok = ValidMsgID(h.Get("Message-Id"))
	if !ok {
		return "", "", time.Time{}, false
	}
	list, err := h.AddressList("To")
	if err != nil || len(list) == 0 {
		return "", "", time.Time{}, false
	}
	date, err = h.Date()
	if err != nil {
		return "", "", time.Time{}, false
	}
	return id, list[0].Address, date, true
}
