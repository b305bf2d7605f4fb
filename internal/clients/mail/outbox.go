package mail

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"mime"
	netmail "net/mail"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"triage"
	"triage/internal/atomicfile"
	"triage/internal/replies"
)

// Outbox is a Sender that writes every reply as an .eml file into a
// directory instead of delivering it: <dir>/<UTC timestamp>-<message id>.eml,
// and every draft (Reply.Draft) into <dir>/drafts/. Files appear atomically
// (written to a temporary file, then renamed).
type Outbox struct {
	mu    sync.Mutex // one writer at a time: the existing-reply check, the limit check and the write are one step
	dir   string
	now   func() time.Time
	index outboxIndex // the files and replies in dir (history.go)
	ext   Index       // when set, the index instead of index (storeindex.go)
	limit senderLimit // limit.go
	// notices bounds the staff notices written (SetNoticeLimits).
	notices triage.NoticeLimits
}

// SetNoticeLimits bounds the staff notices (Reply.Notice) Send writes:
// one over a bound is refused with a *NoticeLimitError and not written.
// Call it before the first Send.
func (o *Outbox) SetNoticeLimits(l triage.NoticeLimits) { o.notices = l }

// NoticeLimitError refuses a staff notice over a bound of
// triage.NoticeLimits; nothing was written.
type NoticeLimitError struct {
	Reason   triage.Reason // triage.ReasonNoticeLimit or triage.ReasonNoticeGlobalLimit
	Customer string        // for triage.ReasonNoticeLimit
	Count    int
	Limit    int
}

// LimitReason is e.Reason (triage.Limited).
func (e *NoticeLimitError) LimitReason() triage.Reason { return e.Reason }

func (e *NoticeLimitError) Error() string {
	if e.Reason == triage.ReasonNoticeLimit {
		return fmt.Sprintf("mail: outbox: %s: %d staff notices about mail from %s in the last hour (limit %d)", e.Reason, e.Count, e.Customer, e.Limit)
	}
	return fmt.Sprintf("mail: outbox: %s: %d staff notices in the last hour (limit %d)", e.Reason, e.Count, e.Limit)
}

// overNotices is the *NoticeLimitError a notice about customer, dated at,
// would meet, or nil. Called with o.mu held.
func (o *Outbox) overNotices(ctx context.Context, customer string, at time.Time) error {
	since := at.Add(-time.Hour)
	if n := o.notices.PerCustomer; n > 0 && customer != "" {
		got, err := o.noticesSince(ctx, customer, since)
		if err != nil {
			return err
		}
		if got >= n {
			return &NoticeLimitError{Reason: triage.ReasonNoticeLimit, Customer: strings.ToLower(customer), Count: got, Limit: n}
		}
	}
	if n := o.notices.PerHour; n > 0 {
		got, err := o.noticesSince(ctx, "", since)
		if err != nil {
			return err
		}
		if got >= n {
			return &NoticeLimitError{Reason: triage.ReasonNoticeGlobalLimit, Count: got, Limit: n}
		}
	}
	return nil
}

// noticesSince counts the staff notices dated at or after since about mail
// from customer ("": every notice), from the store's index (UseIndex) or
// the directory's.
func (o *Outbox) noticesSince(ctx context.Context, customer string, since time.Time) (int, error) {
	if o.ext != nil {
		n, err := o.ext.OutboxNotices(ctx, strings.ToLower(customer), since)
		return n, extErr(err)
	}
	if err := o.loadIndex(ctx); err != nil {
		return 0, err
	}
	o.index.mu.Lock()
	defer o.index.mu.Unlock()
	return o.index.noticesSince(customer, since), nil
}

var _ Sender = (*Outbox)(nil)

// DraftsDir is the subdirectory of an outbox that receives drafts.
const DraftsDir = "drafts"

// NewOutbox creates dir when missing.
func NewOutbox(dir string) (*Outbox, error) {
	if dir == "" {
		return nil, fmt.Errorf("mail: outbox: directory is required")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("mail: outbox: %w", err)
	}
	return &Outbox{dir: dir, now: time.Now}, nil
}

// Dir is the outbox directory.
func (o *Outbox) Dir() string { return o.dir }

// Send renders r and writes it to the outbox. A reply whose Message-ID is
// already in the outbox (an earlier run answered the same message) is not
// written again: the receipt names the existing file and says Existing.
// Under a per-sender limit (SetPerSenderLimit) a new reply or draft that
// would pass it is not written: the error is a *LimitError.
func (o *Outbox) Send(ctx context.Context, r *Reply) (triage.Receipt, error) {
	if err := ctx.Err(); err != nil {
		return triage.Receipt{}, fmt.Errorf("mail: outbox: %w", err)
	}
	raw, err := Render(r)
	if err != nil {
		return triage.Receipt{}, err
	}
	to, err := bareAddress("To", r.To)
	if err != nil {
		return triage.Receipt{}, err
	}
	stamp := r.Date
	if stamp.IsZero() {
		stamp = o.now()
	}
	name := stamp.UTC().Format("20060102T150405Z") + "-" + sanitize(r.MessageID) + ".eml"
	dir, drafted := o.dir, false
	if r.Draft {
		dir, drafted = filepath.Join(o.dir, DraftsDir), true
		if err := o.mkdirDrafts(dir); err != nil {
			return triage.Receipt{}, fmt.Errorf("mail: outbox: %w", err)
		}
	}
	path := filepath.Join(dir, name)

	// The same inbound message (the same deterministic Message-ID) processed
	// again, e.g. process run twice over one inbox: the reply exists already.
	o.mu.Lock()
	defer o.mu.Unlock()
	// Another process may share the directory (overlapping runs, the
	// console sending a draft): the check and the write are one step
	// across processes too, and the lookup reads what the other wrote to
	// the index (the file, or the store's).
	unlock, err := lockDir(ctx, o.dir)
	if err != nil {
		return triage.Receipt{}, fmt.Errorf("mail: outbox: %w", err)
	}
	defer unlock()
	if r.MessageID != "" {
		prev, ok, err := o.lookup(ctx, r.Draft, r.MessageID)
		if err != nil {
			return triage.Receipt{}, err
		}
		if ok {
			// The receipt names where that mail went, which need not be
			// this call's address (a forged From reusing the Message-ID, a
			// Reply-To changed between runs).
			rc, prevInbound := existingReply(prev, r.MessageID, to, drafted)
			if r.InboundDigest != "" && prevInbound != "" && prevInbound != r.InboundDigest {
				return triage.Receipt{}, fmt.Errorf("%w: %s", ErrOtherInbound, prev)
			}
			// The send that wrote it may have failed to sync its name.
			if err := syncDir(filepath.Dir(prev)); err != nil {
				return triage.Receipt{}, fmt.Errorf("mail: outbox: %w", err)
			}
			return rc, nil
		}
	}

	// Exact however many emails are answered at once: the count and the
	// write that adds to it are both under o.mu.
	if err := o.checkLimit(ctx, to, r.answers(), stamp); err != nil {
		return triage.Receipt{}, err
	}

	if r.Notice && !r.Draft {
		if err := o.overNotices(ctx, r.InboundFrom, stamp); err != nil {
			return triage.Receipt{}, err
		}
		raw = append([]byte(NoticeHeader+": "+oneLine(r.InboundFrom)+"\r\n"), raw...)
	}
	if r.InboundDigest != "" {
		raw = append([]byte(InboundHeader+": "+r.InboundDigest+"\r\n"), raw...)
	}
	if o.ext != nil {
		// Recorded before the file: a crash in between leaves a row whose
		// file is missing, which the next send writes (extExisting).
		if err := o.extRecord(ctx, r, to, path, stamp); err != nil {
			return triage.Receipt{}, err
		}
	}
	if err := atomicfile.Place(path, raw, 0o644); err != nil {
		return triage.Receipt{}, fmt.Errorf("mail: outbox: %w", err)
	}
	if r.MessageID != "" && o.ext == nil {
		l := indexLine{MessageID: r.MessageID, To: to, Sender: bareOrEmpty(r.answers()), Date: stamp, File: filepath.Base(path), Notice: r.Notice, Customer: r.about()}
		if r.Draft {
			l.Kind, l.File = replies.KindDraft, DraftsDir+"/"+l.File
		}
		// An error leaves the reply written and the index file without its
		// line: the next run reads the file's header instead.
		_ = o.remember(l, path)
	}
	// The file's bytes are on disk; the rename that names it is only once
	// its directory is. Until then a power failure may lose the reply that
	// the caller is about to record as sent. A failure here is an error,
	// and the file stays: a retry finds it (Existing) and syncs again.
	if err := syncDir(dir); err != nil {
		return triage.Receipt{}, fmt.Errorf("mail: outbox: %w", err)
	}
	return triage.Receipt{MessageID: r.MessageID, To: to, Path: path, Drafted: drafted}, nil
}

// mkdirDrafts creates the drafts directory dir when missing, and makes its
// name in the outbox durable.
func (o *Outbox) mkdirDrafts(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return syncDir(o.dir)
}

// syncDir is atomicfile.SyncDir (a variable for the tests).
var syncDir = atomicfile.SyncDir

// sanitize keeps a message id usable as a file name.
func sanitize(id string) string {
	id = strings.Trim(id, "<>")
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.', r == '@':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 100 {
		s = s[:100]
	}
	if s == "" {
		s = "reply"
	}
	return s
}

// Answered finds the reply (or draft) an earlier run wrote into this
// outbox for a Key, as processor.Config.Answered wants it: its Message-ID is
// derived from the Key as send_email derives it (MessageIDFor, with the
// replies' domain); nil when there is none.
func (o *Outbox) Answered(domain string) func(context.Context, triage.Key) (*triage.Receipt, string, error) {
	return func(ctx context.Context, key triage.Key) (*triage.Receipt, string, error) {
		rc, inbound, ok, err := o.Find(ctx, MessageIDFor(key, domain))
		if err != nil || !ok {
			return nil, "", err
		}
		return &rc, inbound, nil
	}
}

// Find returns the receipt of the reply this outbox holds with Message-ID
// messageID, else of the draft (Existing set), and the digest of the
// message it answers (InboundHeader; "" when the file has none). ok is false
// when it holds neither. It reads the index, not the directory.
func (o *Outbox) Find(ctx context.Context, messageID string) (rc triage.Receipt, inbound string, ok bool, err error) {
	for _, draft := range []bool{false, true} {
		path, found, err := o.lookup(ctx, draft, messageID)
		if err != nil {
			return triage.Receipt{}, "", false, err
		}
		if found {
			rc, inbound := existingReply(path, messageID, "", draft)
			return rc, inbound, true, nil
		}
	}
	return triage.Receipt{}, "", false, nil
}

// lookup returns the file of the reply or draft with this Message-ID, from
// the store's index (UseIndex) or the directory's.
func (o *Outbox) lookup(ctx context.Context, draft bool, messageID string) (string, bool, error) {
	if o.ext != nil {
		return o.extExisting(ctx, draft, messageID)
	}
	return o.existing(ctx, draft, messageID)
}

// subjectDecoder decodes the RFC 2047 words of a rendered reply's subject
// (UTF-8, as Render writes them).
var subjectDecoder mime.WordDecoder

// existingReply is the receipt of the reply (or draft) file at path, whose
// Message-ID is id, and the digest of the message it answers
// (InboundHeader; "" when it has none). to is its recipient when the file
// cannot be read.
func existingReply(path, id, to string, drafted bool) (triage.Receipt, string) {
	rc := triage.Receipt{MessageID: id, To: to, Path: path, Drafted: drafted, Existing: true}
	h, err := readHeader(path)
	if err != nil {
		return rc, ""
	}
	if a, err := bareAddress("To", h.Get("To")); err == nil {
		rc.To = a
	}
	if s, err := subjectDecoder.DecodeHeader(h.Get("Subject")); err == nil {
		rc.Subject = s
	}
	return rc, h.Get(InboundHeader)
}

// readHeader reads the header of the message file at path (its first MiB
// at most).
func readHeader(path string) (netmail.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := netmail.ReadMessage(bufio.NewReader(io.LimitReader(f, 1<<20)))
	if err != nil {
		return nil, err
	}
	return m.Header, nil
}

// InboundHeader names, in an outbox file, the DigestOf the message the
// reply answers: a later message reusing the Key is told apart from a second
// run over the same one. Only outbox files carry it.
const InboundHeader = "X-Triage-Inbound"

// NoticeHeader marks, in an outbox file, a staff notice and names the
// customer it is about, so the notice bounds hold across runs even when the
// index file lacks its line. Only outbox files carry it.
const NoticeHeader = "X-Triage-Notice"

// oneLine is s without line breaks or control characters.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }), "")
}
