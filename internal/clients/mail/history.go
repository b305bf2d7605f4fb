package mail

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// IndexFile is the outbox's index of the replies it holds, one JSON object
// a line ({"message_id","to","date","file"}), appended by Send after each
// reply file is in place. A run reads it once instead of the header of
// every .eml file; a reply file the index does not list (written by
// another program, or a crash between the file and its line) is read once
// and added.
const IndexFile = ".index.jsonl"

// outboxIndex is what an Outbox knows of its directory: the reply files by
// the Message-ID in their names (the duplicate check of Send), and the
// Message-IDs, recipients and dates of the replies (for loop breaking).
// It is built once, at first use, and kept up to date by Send, so a run of
// `triage process` sees the replies of earlier runs into the same outbox
// and no send reads the directory. Drafts are not replies that went out:
// only their file names are indexed.
type outboxIndex struct {
	mu     sync.Mutex
	loaded bool
	files  map[string]string      // nameKey(dir, sanitized id) -> path
	offset int64                  // how much of the index file has been read
	ids    map[string]bool        // lower-case Message-ID of every reply
	byTo   map[string][]time.Time // lower-case recipient -> reply dates
}

type indexLine struct {
	MessageID string    `json:"message_id"`
	To        string    `json:"to"`
	Date      time.Time `json:"date"`
	File      string    `json:"file"`
}

// SentReply reports whether messageID is the Message-ID of a reply in this
// outbox (drafts excluded).
func (o *Outbox) SentReply(ctx context.Context, messageID string) (bool, error) {
	id, ok := ValidMsgID(messageID)
	if !ok {
		return false, nil
	}
	if o.ext != nil {
		key, _ := indexKey(id)
		_, found, err := o.ext.OutboxPath(ctx, key)
		return found, err
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
	if o.ext != nil {
		return o.ext.OutboxRepliesSince(ctx, strings.ToLower(strings.TrimSpace(addr)), since)
	}
	if err := o.loadIndex(ctx); err != nil {
		return 0, err
	}
	addr = strings.ToLower(strings.TrimSpace(addr))
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	n := 0
	for _, d := range o.index.byTo[addr] {
		if !d.Before(since) {
			n++
		}
	}
	return n, nil
}

// nameKey is the index key of a file whose name carries sanitized id, in
// the outbox (draft false) or its drafts directory.
func nameKey(draft bool, sanitized string) string {
	if draft {
		return DraftsDir + "/" + sanitized
	}
	return sanitized
}

// idOfName is the sanitized Message-ID in an outbox file name
// (<stamp>-<id>.eml), or "" for a name of another shape.
func idOfName(name string) string {
	if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".eml") {
		return ""
	}
	_, id, ok := strings.Cut(strings.TrimSuffix(name, ".eml"), "-")
	if !ok {
		return ""
	}
	return id
}

// existing returns the file of the reply or draft with this Message-ID.
func (o *Outbox) existing(ctx context.Context, draft bool, messageID string) (string, bool, error) {
	if err := o.loadIndex(ctx); err != nil {
		return "", false, err
	}
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	p, ok := o.index.files[nameKey(draft, sanitize(messageID))]
	return p, ok, nil
}

// remember adds a file written by Send; a reply (not a draft) also gets its
// line in the index file.
func (o *Outbox) remember(draft bool, path, messageID, to string, date time.Time) error {
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	o.index.files[nameKey(draft, sanitize(messageID))] = path
	if draft {
		return nil
	}
	id, ok := ValidMsgID(messageID)
	if !ok {
		return nil
	}
	o.index.add(id, to, date)
	return o.appendIndex(indexLine{MessageID: id, To: to, Date: date, File: filepath.Base(path)})
}

func (x *outboxIndex) add(id, to string, date time.Time) {
	id = strings.ToLower(id)
	if x.ids[id] {
		return
	}
	x.ids[id] = true
	to = strings.ToLower(to)
	x.byTo[to] = append(x.byTo[to], date)
}

// appendIndex adds one line to the index file (one write, O_APPEND, so
// several processes may share an outbox).
func (o *Outbox) appendIndex(l indexLine) error {
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("mail: outbox: index: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(o.dir, IndexFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("mail: outbox: index: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("mail: outbox: index: %w", err)
	}
	return f.Close()
}

// loadIndex builds the index once: the index file, then the names in the
// directory (one listing, no file read) and the header of any reply file
// the index file does not list. A file that is not a readable message is
// skipped: the index only ever adds what it can read.
func (o *Outbox) loadIndex(ctx context.Context) error {
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	if o.index.loaded {
		return o.follow(nil)
	}
	x := &o.index
	x.files, x.ids, x.byTo = map[string]string{}, map[string]bool{}, map[string][]time.Time{}
	listed := map[string]bool{}
	if err := o.follow(listed); err != nil {
		return err
	}
	for _, draft := range []bool{false, true} {
		dir := o.dir
		if draft {
			dir = filepath.Join(o.dir, DraftsDir)
		}
		names, err := listNames(dir)
		if err != nil {
			return fmt.Errorf("mail: outbox: %w", err)
		}
		for _, name := range names {
			id := idOfName(name)
			if id == "" {
				continue
			}
			path := filepath.Join(dir, name)
			if _, dup := x.files[nameKey(draft, id)]; !dup {
				x.files[nameKey(draft, id)] = path
			}
			if draft || listed[name] {
				continue
			}
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("mail: outbox: read replies: %w", err)
			}
			if mid, to, date, ok := readReplyHeader(path); ok {
				x.add(mid, to, date)
				if err := o.appendIndex(indexLine{MessageID: mid, To: to, Date: date, File: name}); err != nil {
					return err
				}
			}
		}
	}
	x.loaded = true
	return nil
}

// follow reads the lines added to the index file since the last call
// (by this process or another sharing the outbox); listed, when not nil,
// collects their file names. Called with the index locked.
func (o *Outbox) follow(listed map[string]bool) error {
	x := &o.index
	f, err := os.Open(filepath.Join(o.dir, IndexFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mail: outbox: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() <= x.offset {
		return nil
	}
	if _, err := f.Seek(x.offset, io.SeekStart); err != nil {
		return fmt.Errorf("mail: outbox: read %s: %w", IndexFile, err)
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // EOF, or a line still being written: read it next time
		}
		x.offset += int64(len(line))
		var l indexLine
		if json.Unmarshal(line, &l) != nil || l.File == "" {
			continue
		}
		id, ok := ValidMsgID(l.MessageID)
		if !ok {
			continue
		}
		x.add(id, l.To, l.Date)
		if sid := idOfName(l.File); sid != "" {
			x.files[nameKey(false, sid)] = filepath.Join(o.dir, l.File)
		}
		if listed != nil {
			listed[l.File] = true
		}
	}
	return nil
}

// listNames lists the names in dir, unsorted; none when it does not exist.
func listNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
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
