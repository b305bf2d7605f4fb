package replies

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	netmail "net/mail"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"triage"
	"triage/internal/atomicfile"
	"triage/internal/clients/mail"
)

// Outbox is the reply memory of `triage process`: a mail.Sender that writes
// each reply through an outbox directory (mail.Outbox, the transport) and
// remembers what the directory holds, by the directory's own index
// (IndexFile and IndexDB) or the store's (UseIndex). A reply already written is not
// written again, the per-sender limit (SetPerSenderLimit) and the notice
// bounds (SetNoticeLimits) refuse what would pass them, and runs sharing
// the directory take turns (LockFile, Claim).
type Outbox struct {
	mu    sync.Mutex // one writer at a time: the existing-reply check, the limit check and the write are one step
	files *mail.Outbox
	dir   string
	ext   Index // the store's index (UseIndex, outboxstore.go), else local
	// local is the directory's own index (dirindex.go), opened at the
	// first lookup; localMu guards it.
	local   *dirIndex
	localMu sync.Mutex
	limit   senderLimit // outboxlimit.go
	// notices bounds the staff notices written (SetNoticeLimits).
	notices triage.NoticeLimits
}

var _ mail.Sender = (*Outbox)(nil)

// NewOutbox is the reply memory of the outbox directory dir (created when
// missing).
func NewOutbox(dir string) (*Outbox, error) {
	files, err := mail.NewOutbox(dir)
	if err != nil {
		return nil, err
	}
	return &Outbox{files: files, dir: dir}, nil
}

// Dir is the outbox directory.
func (o *Outbox) Dir() string { return o.dir }

// Close closes the directory's index (IndexDB) when a lookup opened it.
func (o *Outbox) Close() error {
	o.localMu.Lock()
	defer o.localMu.Unlock()
	if o.local == nil {
		return nil
	}
	err := o.local.Close()
	o.local = nil
	return err
}

// index is the outbox's index: the store's (UseIndex), else the
// directory's, opened (and brought up to date with IndexFile) the first
// time.
func (o *Outbox) index(ctx context.Context) (outboxIndex, error) {
	if o.ext != nil {
		return o.ext, nil
	}
	o.localMu.Lock()
	defer o.localMu.Unlock()
	if o.local == nil {
		x, err := openDirIndex(ctx, o.dir, false)
		if err != nil {
			return nil, err
		}
		o.local = x
	}
	return o.local, nil
}

// SentReply reports whether messageID is the Message-ID of a reply (or a
// staff notice) in this outbox (drafts excluded).
func (o *Outbox) SentReply(ctx context.Context, messageID string) (bool, error) {
	id, ok := indexID(messageID)
	if !ok {
		return false, nil
	}
	x, err := o.index(ctx)
	if err != nil {
		return false, err
	}
	_, found, err := x.OutboxFile(ctx, id, KindReply, KindNotice)
	return found, extErr(err)
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
	return o.countSince(ctx, addr, since, KindReply)
}

// CountedSince counts what the per-sender limit counts against addr since
// since: the replies and the drafts to addr or answering a message from
// it (each draft cost a model run and perhaps a ticket).
func (o *Outbox) CountedSince(ctx context.Context, addr string, since time.Time) (int, error) {
	return o.countSince(ctx, addr, since, KindReply, KindDraft)
}

func (o *Outbox) countSince(ctx context.Context, addr string, since time.Time, kinds ...Kind) (int, error) {
	x, err := o.index(ctx)
	if err != nil {
		return 0, err
	}
	n, err := x.OutboxCount(ctx, normAddr(addr), since, kinds...)
	return n, extErr(err)
}

// SetNoticeLimits bounds the staff notices (Reply.Notice) Send writes:
// one over a bound is refused with a *LimitError and not written.
// Call it before the first Send.
func (o *Outbox) SetNoticeLimits(l triage.NoticeLimits) { o.notices = l }

// overNotices is the *LimitError a notice about customer, dated at, would
// meet, or nil. Called with o.mu held.
func (o *Outbox) overNotices(ctx context.Context, customer string, at time.Time) error {
	since := at.Add(-time.Hour)
	if n := o.notices.PerCustomer; n > 0 && customer != "" {
		got, err := o.noticesSince(ctx, customer, since)
		if err != nil {
			return err
		}
		if got >= n {
			return &LimitError{Reason: triage.ReasonNoticeLimit, Address: strings.ToLower(customer), Count: got, Limit: n, outbox: true}
		}
	}
	if n := o.notices.PerHour; n > 0 {
		got, err := o.noticesSince(ctx, "", since)
		if err != nil {
			return err
		}
		if got >= n {
			return &LimitError{Reason: triage.ReasonNoticeGlobalLimit, Count: got, Limit: n, outbox: true}
		}
	}
	return nil
}

// noticesSince counts the staff notices dated at or after since about mail
// from customer ("": every notice), from the store's index (UseIndex) or
// the directory's.
func (o *Outbox) noticesSince(ctx context.Context, customer string, since time.Time) (int, error) {
	x, err := o.index(ctx)
	if err != nil {
		return 0, err
	}
	n, err := x.OutboxNotices(ctx, strings.ToLower(customer), since)
	return n, extErr(err)
}

// Send renders r and writes it to the outbox. A reply whose Message-ID is
// already in the outbox (an earlier run answered the same message) is not
// written again: the receipt names the existing file and says Existing.
// Under a per-sender limit (SetPerSenderLimit) a new reply or draft that
// would pass it is not written: the error is a *LimitError.
func (o *Outbox) Send(ctx context.Context, r *mail.Reply) (triage.Receipt, error) {
	if err := ctx.Err(); err != nil {
		return triage.Receipt{}, fmt.Errorf("mail: outbox: %w", err)
	}
	f, err := o.files.Prepare(r)
	if err != nil {
		return triage.Receipt{}, err
	}
	// The file's bytes are written and synced under a temporary name
	// before the locks, which then hold only the checks, the rename and
	// the index: emails answered at once do not wait for each other's
	// disk. (A staging error leaves the write to be tried under the locks,
	// where an existing reply is found without it.)
	tmp, err := o.files.Stage(f)
	if err == nil {
		defer tmp.Remove() // the file is not written after all
	}
	rc, err := o.place(ctx, r, f, tmp)
	if err != nil {
		return triage.Receipt{}, err
	}
	if tmp != nil {
		tmp.Remove() // an existing reply: this one is not written
	}
	// The file's bytes are on disk; the rename that names it is only once
	// its directory is. Until then a power failure may lose the reply that
	// the caller is about to record as sent. A failure here is an error,
	// and the file stays: a retry finds it (Existing) and syncs again. An
	// existing reply's directory is synced too: the send that wrote it may
	// have failed to sync its name.
	if err := syncDir(filepath.Dir(rc.Path)); err != nil {
		return triage.Receipt{}, fmt.Errorf("mail: outbox: %w", err)
	}
	return rc, nil
}

// place is Send's one step under o.mu and the directory's lock: the check
// for an existing reply (whose receipt it returns), the limits, and the
// file named (tmp renamed; written whole when tmp is nil) and indexed.
func (o *Outbox) place(ctx context.Context, r *mail.Reply, f *mail.File, tmp *atomicfile.Temp) (triage.Receipt, error) {
	// The same inbound message (the same deterministic Message-ID) processed
	// again, e.g. process run twice over one inbox: the reply exists already.
	o.mu.Lock()
	defer o.mu.Unlock()
	// Another process may share the directory (overlapping runs, the
	// console sending a draft): the check and the write are one step
	// across processes too, and the lookup reads what the other wrote to
	// the index (the directory's, or the store's). The directory's index
	// is opened first: opening it takes the lock.
	if _, err := o.index(ctx); err != nil {
		return triage.Receipt{}, err
	}
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
			rc, prevInbound := existingReply(prev, r.MessageID, f.To, r.Draft)
			if r.InboundDigest != "" && prevInbound != "" && prevInbound != r.InboundDigest {
				return triage.Receipt{}, fmt.Errorf("%w: %s", mail.ErrOtherInbound, prev)
			}
			return rc, nil
		}
	}

	// Exact however many emails are answered at once: the count and the
	// write that adds to it are both under o.mu.
	if err := o.checkLimit(ctx, f.To, r.Answers(), f.Date); err != nil {
		return triage.Receipt{}, err
	}

	if r.Notice && !r.Draft {
		if err := o.overNotices(ctx, r.InboundFrom, f.Date); err != nil {
			return triage.Receipt{}, err
		}
	}
	// Recorded before the file: a crash in between leaves a row (and a
	// line in IndexFile) whose file is missing, which the next send writes
	// (extExisting).
	if err := o.extRecord(ctx, r, f.To, f.Path, f.Date); err != nil {
		return triage.Receipt{}, err
	}
	if tmp != nil {
		if err := tmp.Rename(); err != nil {
			return triage.Receipt{}, fmt.Errorf("mail: outbox: %w", err)
		}
	} else if err := o.files.Write(f); err != nil {
		return triage.Receipt{}, err
	}
	return f.Receipt(), nil
}

// syncDir is atomicfile.SyncDir (a variable for the tests).
var syncDir = atomicfile.SyncDir

// Answered finds the reply (or draft) an earlier run wrote into this
// outbox for a Key, as processor.Config.Answered wants it: its Message-ID is
// derived from the Key as send_email derives it (mail.MessageIDFor, with
// the replies' domain); nil when there is none.
func (o *Outbox) Answered(domain string) func(context.Context, triage.Key) (*triage.Receipt, string, error) {
	return func(ctx context.Context, key triage.Key) (*triage.Receipt, string, error) {
		rc, inbound, ok, err := o.Find(ctx, mail.MessageIDFor(key, domain))
		if err != nil || !ok {
			return nil, "", err
		}
		return &rc, inbound, nil
	}
}

// Find returns the receipt of the reply this outbox holds with Message-ID
// messageID, else of the draft (Existing set), and the digest of the
// message it answers (mail.InboundHeader; "" when the file has none). ok is
// false when it holds neither. It reads the index, not the directory.
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
	return o.extExisting(ctx, draft, messageID)
}

// subjectDecoder decodes the RFC 2047 words of a rendered reply's subject
// (UTF-8, as mail.Render writes them).
var subjectDecoder mime.WordDecoder

// existingReply is the receipt of the reply (or draft) file at path, whose
// Message-ID is id, and the digest of the message it answers
// (mail.InboundHeader; "" when it has none). to is its recipient when the
// file cannot be read.
func existingReply(path, id, to string, drafted bool) (triage.Receipt, string) {
	rc := triage.Receipt{MessageID: id, To: to, Path: path, Drafted: drafted, Existing: true}
	h, err := readHeader(path)
	if err != nil {
		return rc, ""
	}
	if a := mail.BareAddress(h.Get("To")); a != "" {
		rc.To = a
	}
	if s, err := subjectDecoder.DecodeHeader(h.Get("Subject")); err == nil {
		rc.Subject = s
	}
	return rc, h.Get(mail.InboundHeader)
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
