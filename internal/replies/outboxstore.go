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
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"triage/internal/atomicfile"
	"triage/internal/clients/mail"
)

// Index is an outbox index kept outside the directory: the store of
// triage process --store (*Store). It holds one row per reply,
// draft and staff notice (of a Kind) by
// Message-ID (lower case, without brackets) with its file, recipient, the
// sender of the message it answers and, for a notice, the customer it is
// about. With one, an Outbox never lists or reads its directory and writes
// neither IndexFile nor IndexDB. Without one, the directory's own index
// (dirIndex) keeps the same rows in IndexDB.
type Index interface {
	outboxIndex
	// AddOutboxRows records rows in one transaction (UseIndex's import).
	AddOutboxRows(ctx context.Context, rows []IndexRow) error
}

// outboxIndex is what an Outbox asks of its index: the store's (Index)
// or its directory's (dirIndex).
type outboxIndex interface {
	// OutboxFile is the file of the row id of one of kinds.
	OutboxFile(ctx context.Context, id string, kinds ...Kind) (path string, ok bool, err error)
	// OutboxCount counts the rows of kinds dated at or after since whose
	// recipient or sender is addr.
	OutboxCount(ctx context.Context, addr string, since time.Time, kinds ...Kind) (int, error)
	// OutboxNotices counts the notices dated at or after since about
	// customer ("": every notice).
	OutboxNotices(ctx context.Context, customer string, since time.Time) (int, error)
	// AddOutbox records a row (replacing one with the same id and kind).
	AddOutbox(ctx context.Context, id string, kind Kind, path, to, sender, customer string, date time.Time) error
}

// The store is the outbox's index.
var _ Index = (*Store)(nil)

// importedFile marks an outbox whose IndexFile was copied into an Index;
// it holds how many bytes of IndexFile were.
const importedFile = ".index.in-store"

// UseIndex keeps the outbox's index in x instead of IndexFile. Call it
// before the first Send. The first time, what the directory already holds
// is copied into x (IndexFile, completed from the headers of any file it
// does not list: once, however long); later, only the lines a run without
// the store appended to IndexFile since. The replies written with x are in
// x only: the directory's own index (IndexDB), when there is one, is told
// to list the directory at its next open, where a run without the store
// finds them.
func (o *Outbox) UseIndex(ctx context.Context, x Index) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	marker := filepath.Join(o.dir, importedFile)
	b, err := os.ReadFile(marker)
	marked := err == nil
	var from int64
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Never imported: complete IndexFile from the directory first.
		local, err := openDirIndex(ctx, o.dir, true)
		if err != nil {
			return err
		}
		local.Close()
	case err != nil:
		return fmt.Errorf("mail: outbox: %w", err)
	default:
		if from, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err != nil {
			return fmt.Errorf("mail: outbox: %s: %w", marker, err)
		}
	}
	rows, end, err := o.indexLines(from)
	if err != nil {
		return err
	}
	if len(rows) > 0 {
		if err := x.AddOutboxRows(ctx, rows); err != nil {
			return extErr(err)
		}
	}
	if err := relistDirIndex(ctx, o.dir); err != nil {
		return err
	}
	o.ext = x
	if marked && end == from {
		return nil
	}
	if err := atomicfile.Write(marker, []byte(strconv.FormatInt(end, 10)+"\n"), 0o644); err != nil {
		return fmt.Errorf("mail: outbox: %w", err)
	}
	return nil
}

// indexLines reads IndexFile from offset from: its rows, and where it ends.
func (o *Outbox) indexLines(from int64) ([]IndexRow, int64, error) {
	f, err := os.Open(filepath.Join(o.dir, IndexFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("mail: outbox: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, 0, fmt.Errorf("mail: outbox: read %s: %w", IndexFile, err)
	}
	var rows []IndexRow
	end := from
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // EOF, or a line still being written
		}
		end += int64(len(line))
		var l indexLine
		if json.Unmarshal(line, &l) != nil || l.File == "" {
			continue
		}
		id, ok := indexID(l.MessageID)
		if !ok {
			continue
		}
		kind := KindReply
		switch {
		case l.Kind == KindDraft:
			kind = KindDraft
		case l.Notice:
			kind = KindNotice
		}
		rows = append(rows, IndexRow{ID: id, Kind: kind, Path: filepath.Join(o.dir, filepath.FromSlash(l.File)),
			To: normAddr(l.To), Sender: normAddr(l.Sender), Customer: strings.ToLower(l.Customer), Date: l.Date})
	}
	return rows, end, nil
}

// indexID is a Message-ID as an Index keys it.
func indexID(messageID string) (string, bool) {
	id, ok := mail.ValidMsgID(messageID)
	return strings.ToLower(id), ok
}

// extExisting returns the file of the reply or draft with this Message-ID.
// A row is recorded before its file is written, so a row whose file is not
// there was never written: the file is written now.
func (o *Outbox) extExisting(ctx context.Context, draft bool, messageID string) (string, bool, error) {
	id, ok := indexID(messageID)
	if !ok {
		return "", false, nil
	}
	x, err := o.index(ctx)
	if err != nil {
		return "", false, err
	}
	kinds := []Kind{KindReply, KindNotice}
	if draft {
		kinds = []Kind{KindDraft}
	}
	p, ok, err := x.OutboxFile(ctx, id, kinds...)
	if err != nil || !ok {
		return "", false, extErr(err)
	}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	return p, true, nil
}

// extRecord records what Send is about to write.
func (o *Outbox) extRecord(ctx context.Context, r *mail.Reply, to, path string, date time.Time) error {
	id, ok := indexID(r.MessageID)
	if !ok {
		return nil
	}
	kind := KindReply
	switch {
	case r.Draft:
		kind = KindDraft
	case r.Notice:
		kind = KindNotice
	}
	x, err := o.index(ctx)
	if err != nil {
		return err
	}
	return extErr(x.AddOutbox(ctx, id, kind, path, normAddr(to), normAddr(mail.BareAddress(r.Answers())), strings.ToLower(r.About()), date))
}

func extErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("mail: outbox index: %w", err)
}
