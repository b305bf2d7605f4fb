package replies

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"triage/internal/clients/mail"
)

// IndexFile is the outbox's index of the replies and drafts it holds, one
// JSON object a line ({"message_id","to","sender","kind","date","file"}),
// appended by Send after each file is in place. A run reads it once instead
// of the header of every .eml file; a file the index does not list
// (written by another program, or a crash between the file and its line)
// is read once and added. Processes sharing the outbox each see the other's
// replies: a reply is checked for and written under LockFile's flock.
const IndexFile = ".index.jsonl"

// outboxIndex is what an Outbox knows of its directory: the reply files by
// the Message-ID in their names (the duplicate check of Send), the
// Message-IDs of the replies (for loop breaking), the dates of the
// replies and drafts that count against each address (the per-sender
// limit), and the dates of the staff notices by the customer they are
// about (the notice bounds). It is built once, at first use, and kept up
// to date by Send, so a run of `triage process` sees the replies of earlier
// runs into the same outbox and no send reads the directory. Drafts are not
// replies that went out: they count against the per-sender limit only. A
// staff notice is no reply: it counts under the notice bounds only.
type outboxIndex struct {
	mu       sync.Mutex
	loaded   bool
	files    map[string]string      // nameKey(dir, sanitized id) -> path
	offset   int64                  // how much of the index file has been read
	ids      map[string]bool        // lower-case Message-ID of every reply and notice
	drafts   map[string]bool        // lower-case Message-ID of every draft
	against  map[string][]count     // lower-case address -> replies and drafts counting against it
	notices  map[string][]time.Time // lower-case customer -> notice dates
	noticeAt []time.Time            // every notice's date
}

// count is one reply or draft counting against an address: its recipient,
// or the sender of the message it answers.
type count struct {
	date  time.Time
	draft bool
}

type indexLine struct {
	MessageID string    `json:"message_id"`
	To        string    `json:"to"`
	Sender    string    `json:"sender,omitempty"` // the From of the message answered
	Kind      Kind      `json:"kind,omitempty"`   // KindDraft, or "" for a reply
	Date      time.Time `json:"date"`
	File      string    `json:"file"` // relative to the outbox: drafts/NAME for a draft
	// Notice marks a staff notice; Customer is the address it is about.
	Notice   bool   `json:"notice,omitempty"`
	Customer string `json:"customer,omitempty"`
}

// SentReply reports whether messageID is the Message-ID of a reply in this
// outbox (drafts excluded).
func (o *Outbox) SentReply(ctx context.Context, messageID string) (bool, error) {
	id, ok := mail.ValidMsgID(messageID)
	if !ok {
		return false, nil
	}
	if o.ext != nil {
		_, found, err := o.ext.OutboxFile(ctx, strings.ToLower(id), KindReply, KindNotice)
		return found, extErr(err)
	}
	if err := o.loadIndex(ctx); err != nil {
		return false, err
	}
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	return o.index.ids[strings.ToLower(id)], nil
}

// ReplyRaw returns the file of the reply (or else the draft) with this
// Message-ID, as written (with the outbox's own X-Triage headers); ok is
// false when the outbox holds none.
func (o *Outbox) ReplyRaw(ctx context.Context, messageID string) ([]byte, bool, error) {
	for _, draft := range []bool{false, true} {
		path, ok, err := o.lookup(ctx, draft, messageID)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			continue
		}
		raw, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("mail: outbox: %w", err)
		}
		return raw, true, nil
	}
	return nil, false, nil
}

// RepliesSince counts the replies in this outbox to addr, or answering a
// message from addr, dated at or after since (drafts and staff notices
// excluded: drafts never went out, notices are no replies).
func (o *Outbox) RepliesSince(ctx context.Context, addr string, since time.Time) (int, error) {
	return o.countSince(ctx, addr, since, false)
}

// CountedSince counts what the per-sender limit counts against addr since
// since: the replies and the drafts to addr or answering a message from
// it (each draft cost a model run and perhaps a ticket).
func (o *Outbox) CountedSince(ctx context.Context, addr string, since time.Time) (int, error) {
	return o.countSince(ctx, addr, since, true)
}

func (o *Outbox) countSince(ctx context.Context, addr string, since time.Time, drafts bool) (int, error) {
	if o.ext != nil {
		kinds := []Kind{KindReply}
		if drafts {
			kinds = append(kinds, KindDraft)
		}
		n, err := o.ext.OutboxCount(ctx, normAddr(addr), since, kinds...)
		return n, extErr(err)
	}
	if err := o.loadIndex(ctx); err != nil {
		return 0, err
	}
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	return o.index.since(normAddr(addr), since, drafts), nil
}

// since counts the entries against addr (normalized) at or after t.
// Called with the index locked.
func (x *outboxIndex) since(addr string, t time.Time, drafts bool) int {
	n := 0
	for _, c := range x.against[addr] {
		if !c.date.Before(t) && (drafts || !c.draft) {
			n++
		}
	}
	return n
}

// nameKey is the index key of a file whose name carries sanitized id, in
// the outbox (draft false) or its drafts directory.
func nameKey(draft bool, sanitized string) string {
	if draft {
		return mail.DraftsDir + "/" + sanitized
	}
	return sanitized
}

// existing returns the file of the reply or draft with this Message-ID.
func (o *Outbox) existing(ctx context.Context, draft bool, messageID string) (string, bool, error) {
	if err := o.loadIndex(ctx); err != nil {
		return "", false, err
	}
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	p, ok := o.index.files[nameKey(draft, mail.FileID(messageID))]
	return p, ok, nil
}

// remember adds a file written by Send, and its line in the index file.
func (o *Outbox) remember(l indexLine, path string) error {
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	draft := l.Kind == KindDraft
	o.index.files[nameKey(draft, mail.FileID(l.MessageID))] = path
	id, ok := mail.ValidMsgID(l.MessageID)
	if !ok {
		return nil
	}
	l.MessageID = id
	o.index.add(l)
	return o.appendIndex(l)
}

// add counts one index line; a Message-ID already counted (of its kind) is
// not counted again. A staff notice counts under the notice bounds only.
func (x *outboxIndex) add(l indexLine) {
	id := strings.ToLower(l.MessageID)
	seen := x.ids
	if l.Kind == KindDraft {
		seen = x.drafts
	}
	if seen[id] {
		return
	}
	seen[id] = true
	if l.Notice {
		c := strings.ToLower(l.Customer)
		x.notices[c] = append(x.notices[c], l.Date)
		x.noticeAt = append(x.noticeAt, l.Date)
		return
	}
	c := count{date: l.Date, draft: l.Kind == KindDraft}
	to, sender := normAddr(l.To), normAddr(l.Sender)
	x.against[to] = append(x.against[to], c)
	if sender != "" && sender != to {
		x.against[sender] = append(x.against[sender], c)
	}
}

// noticesSince counts the notices dated at or after since about mail from
// customer ("" : every notice). Called with the index locked.
func (x *outboxIndex) noticesSince(customer string, since time.Time) int {
	dates := x.noticeAt
	if customer != "" {
		dates = x.notices[strings.ToLower(customer)]
	}
	n := 0
	for _, d := range dates {
		if !d.Before(since) {
			n++
		}
	}
	return n
}

// appendIndex adds one line to the index file (one write, O_APPEND, so
// several processes may share an outbox). When the line directly follows
// what this index has read, the index reads on after it: its own line is
// counted already. Called with the index locked.
func (o *Outbox) appendIndex(l indexLine) error {
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("mail: outbox: index: %w", err)
	}
	b = append(b, '\n')
	f, err := os.OpenFile(filepath.Join(o.dir, IndexFile), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("mail: outbox: index: %w", err)
	}
	// A run that crashed while appending left a line without its end: this
	// one starts on a line of its own, or it would be read as part of that
	// one and skipped with it. A file that ends where the index last read
	// ends with a whole line (follow reads only those).
	if st, err := f.Stat(); err == nil && st.Size() > 0 && st.Size() != o.index.offset {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			b = append([]byte{'\n'}, b...)
		}
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("mail: outbox: index: %w", err)
	}
	if end, err := f.Seek(0, io.SeekCurrent); err == nil && end-int64(len(b)) == o.index.offset {
		o.index.offset = end
	}
	return f.Close()
}

// loadIndex builds the index once: the index file, then the names in the
// directory and its drafts directory (one listing each, no file read) and
// the header of any file the index file does not list. A file that is not
// a readable message is skipped: the index only ever adds what it can read.
func (o *Outbox) loadIndex(ctx context.Context) error {
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	return o.loadIndexLocked(ctx)
}

// loadIndexLocked is loadIndex with the index locked.
func (o *Outbox) loadIndexLocked(ctx context.Context) error {
	if o.index.loaded {
		return o.follow(nil)
	}
	x := &o.index
	x.files, x.ids, x.drafts, x.against = map[string]string{}, map[string]bool{}, map[string]bool{}, map[string][]count{}
	x.notices, x.noticeAt = map[string][]time.Time{}, nil
	listed := map[string]bool{}
	if err := o.follow(listed); err != nil {
		return err
	}
	for _, draft := range []bool{false, true} {
		dir, rel := o.dir, ""
		if draft {
			dir, rel = filepath.Join(o.dir, mail.DraftsDir), mail.DraftsDir+"/"
		}
		names, err := listNames(dir)
		if err != nil {
			return fmt.Errorf("mail: outbox: %w", err)
		}
		for _, name := range names {
			id := mail.FileIDOf(name)
			if id == "" {
				continue
			}
			path := filepath.Join(dir, name)
			if _, dup := x.files[nameKey(draft, id)]; !dup {
				x.files[nameKey(draft, id)] = path
			}
			if listed[rel+name] {
				continue
			}
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("mail: outbox: read replies: %w", err)
			}
			if l, ok := readReplyHeader(path); ok {
				l.File = rel + name
				if draft {
					l.Kind = KindDraft
				}
				x.add(l)
				if err := o.appendIndex(l); err != nil {
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
// collects their files. Called with the index locked.
func (o *Outbox) follow(listed map[string]bool) error {
	x := &o.index
	name := filepath.Join(o.dir, IndexFile)
	// Most calls find nothing new: one stat says so without opening the
	// file.
	if st, err := os.Stat(name); err == nil && st.Size() <= x.offset || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mail: outbox: %w", err)
	}
	defer f.Close()
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
		id, ok := mail.ValidMsgID(l.MessageID)
		if !ok {
			continue
		}
		l.MessageID = id
		x.add(l)
		draft, want := l.Kind == KindDraft, "."
		if draft {
			want = mail.DraftsDir
		}
		if sid := mail.FileIDOf(path.Base(l.File)); sid != "" && path.Dir(l.File) == want {
			x.files[nameKey(draft, sid)] = filepath.Join(o.dir, filepath.FromSlash(l.File))
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

// readReplyHeader reads Message-ID, To and Date of one outbox file, and
// whether it is a staff notice (mail.NoticeHeader names its customer).
func readReplyHeader(name string) (indexLine, bool) {
	h, err := readHeader(name)
	if err != nil {
		return indexLine{}, false
	}
	id, ok := mail.ValidMsgID(h.Get("Message-Id"))
	if !ok {
		return indexLine{}, false
	}
	list, err := h.AddressList("To")
	if err != nil || len(list) == 0 {
		return indexLine{}, false
	}
	date, err := h.Date()
	if err != nil {
		return indexLine{}, false
	}
	l := indexLine{MessageID: id, To: list[0].Address, Date: date}
	if c, ok := h[mail.NoticeHeader]; ok {
		l.Notice = true
		if len(c) > 0 {
			l.Customer = c[0]
		}
	}
	return l, true
}
