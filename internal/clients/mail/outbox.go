package mail

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"triage"
	"triage/internal/atomicfile"
)

// Outbox is a Sender that writes every reply as an .eml file into a
// directory instead of delivering it: <dir>/<UTC timestamp>-<message id>.eml,
// and every draft (Reply.Draft) into <dir>/drafts/. Files appear atomically
// (written to a temporary file, then renamed). It is only the transport: it
// remembers nothing and checks nothing (the reply memory that wraps it
// does: answered before, limits, the lock shared with other processes).
type Outbox struct {
	dir string
	now func() time.Time
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

// File is a reply rendered for an outbox (Prepare): its bytes and the
// file they go to.
type File struct {
	Path      string    // <dir>/<UTC stamp>-<FileID>.eml; under DraftsDir for a draft
	MessageID string    // the reply's
	To        string    // its bare recipient
	Date      time.Time // the stamp of its name: the reply's Date, else now
	Draft     bool
	Raw       []byte // the rendered reply, headed by InboundHeader and NoticeHeader when they apply
}

// Receipt is the receipt of a reply written to f.
func (f *File) Receipt() triage.Receipt {
	return triage.Receipt{MessageID: f.MessageID, To: f.To, Path: f.Path, Drafted: f.Draft}
}

// Prepare renders r and names its file; for a draft it creates the drafts
// directory when missing. It writes no reply.
func (o *Outbox) Prepare(r *Reply) (*File, error) {
	raw, err := Render(r)
	if err != nil {
		return nil, err
	}
	to, err := bareAddress("To", r.To)
	if err != nil {
		return nil, err
	}
	stamp := r.Date
	if stamp.IsZero() {
		stamp = o.now()
	}
	name := stamp.UTC().Format("20060102T150405Z") + "-" + FileID(r.MessageID) + ".eml"
	dir := o.dir
	if r.Draft {
		dir = filepath.Join(o.dir, DraftsDir)
		if err := o.mkdirDrafts(dir); err != nil {
			return nil, fmt.Errorf("mail: outbox: %w", err)
		}
	}
	if r.Notice && !r.Draft {
		raw = append([]byte(NoticeHeader+": "+oneLine(r.InboundFrom)+"\r\n"), raw...)
	}
	if r.InboundDigest != "" {
		raw = append([]byte(InboundHeader+": "+r.InboundDigest+"\r\n"), raw...)
	}
	return &File{Path: filepath.Join(dir, name), MessageID: r.MessageID, To: to, Date: stamp, Draft: r.Draft, Raw: raw}, nil
}

// Write puts f in place, atomically. Its name is durable only once Sync
// has synced its directory.
func (o *Outbox) Write(f *File) error {
	if err := atomicfile.Place(f.Path, f.Raw, 0o644); err != nil {
		return fmt.Errorf("mail: outbox: %w", err)
	}
	return nil
}

// Stage is Write up to the rename: f's bytes are written and synced under
// a temporary name beside f.Path, which the returned file's Rename gives
// them (its Remove drops them).
func (o *Outbox) Stage(f *File) (*atomicfile.Temp, error) {
	t, err := atomicfile.Stage(f.Path, f.Raw, 0o644)
	if err != nil {
		return nil, fmt.Errorf("mail: outbox: %w", err)
	}
	return t, nil
}

// Sync makes the name of the file at path durable: it syncs the directory
// holding it.
func (o *Outbox) Sync(path string) error {
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("mail: outbox: %w", err)
	}
	return nil
}

// Send renders r and writes it to the outbox, whatever the outbox holds
// already: the file of a reply with the same Message-ID and date is
// replaced.
func (o *Outbox) Send(ctx context.Context, r *Reply) (triage.Receipt, error) {
	if err := ctx.Err(); err != nil {
		return triage.Receipt{}, fmt.Errorf("mail: outbox: %w", err)
	}
	f, err := o.Prepare(r)
	if err != nil {
		return triage.Receipt{}, err
	}
	if err := o.Write(f); err != nil {
		return triage.Receipt{}, err
	}
	// The file's bytes are on disk; the rename that names it is only once
	// its directory is.
	if err := o.Sync(f.Path); err != nil {
		return triage.Receipt{}, err
	}
	return f.Receipt(), nil
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

// FileID is a Message-ID as outbox file names carry it: without its
// brackets, every character but letters, digits and -_.@ an underscore, at
// most 100 bytes; "reply" when nothing is left.
func FileID(id string) string {
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

// FileIDOf is the FileID in an outbox file name (<stamp>-<id>.eml), or ""
// for a name of another shape.
func FileIDOf(name string) string {
	if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".eml") {
		return ""
	}
	_, id, ok := strings.Cut(strings.TrimSuffix(name, ".eml"), "-")
	if !ok {
		return ""
	}
	return id
}

// BareAddress is the bare address of s, or "" when s is not one address.
func BareAddress(s string) string {
	a, err := bareAddress("From", s)
	if err != nil {
		return ""
	}
	return a
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
