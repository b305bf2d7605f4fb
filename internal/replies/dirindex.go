package replies

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"triage/internal/clients/mail"
	"triage/internal/store"
)

// IndexFile is the outbox's log of the replies, drafts and staff notices
// it holds, one JSON object a line ({"message_id","to","sender","kind",
// "date","file","notice","customer"}), appended by Send before each file is
// put in place (a line whose file is missing was never written). It is
// what the outbox knows; IndexDB is where a run looks it up.
const IndexFile = ".index.jsonl"

// IndexDB is the look-up table of IndexFile: a SQLite file holding its
// lines as rows (outbox_index, the table the store keeps with --store) and
// how much of IndexFile they cover. A run reads only the lines other runs
// appended since, and a lookup (a Message-ID, the replies to an address in
// a window) is an indexed query, whatever the outbox holds. Deleting it is
// safe: the next run builds it again from IndexFile.
const IndexDB = ".index.db"

// ListEvery is how long a directory goes at most without being listed: a
// run lists the directory (names only) and reads the header of any file
// the log does not name (written by another program, or named by a rename
// that a power failure kept while losing its line) when the log or the
// table is new, after a reboot, and otherwise once in ListEvery.
const ListEvery = 24 * time.Hour

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

// kind is the Kind of the row of l.
func (l indexLine) kind() Kind {
	switch {
	case l.Kind == KindDraft:
		return KindDraft
	case l.Notice:
		return KindNotice
	}
	return KindReply
}

// dirIndex is the outbox index of a directory without a store: IndexFile,
// the log Send appends to, and IndexDB, its lines as rows. Runs sharing
// the directory write the log and the table under the directory's lock
// (LockFile); a lookup first reads the lines another run appended without
// writing their rows (it stopped in between).
type dirIndex struct {
	dir  string
	db   *store.DB
	rows *Store       // the queries of outbox_index, on db
	seen atomic.Int64 // how much of the log this process knows the table holds
}

// logTable is where IndexDB records how much of IndexFile its rows hold:
// the log's inode (a log deleted or replaced starts the table over), the
// bytes read, and when and in which boot the directory was last listed.
const logTable = `
CREATE TABLE IF NOT EXISTS outbox_log (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	inode   BIGINT NOT NULL,
	read_to BIGINT NOT NULL,
	boot    TEXT NOT NULL,
	listed  BIGINT NOT NULL
);`

// logState is the row of logTable; known is false when it has none.
type logState struct {
	inode, readTo int64
	boot          string
	listed        time.Time
	known         bool
}

// openDirIndex opens the index of the outbox dir (IndexDB, created when
// missing) and, under the directory's lock, brings it up to date with the
// log, listing the directory when that is due (ListEvery) or list is set.
func openDirIndex(ctx context.Context, dir string, list bool) (*dirIndex, error) {
	db, err := store.Open(ctx, filepath.Join(dir, IndexDB), store.Options{Synchronous: "NORMAL"})
	if err != nil {
		return nil, fmt.Errorf("mail: outbox: %w", err)
	}
	x := &dirIndex{dir: dir, db: db, rows: New(db, nil)}
	if err := x.open(ctx, list); err != nil {
		db.Close()
		return nil, err
	}
	return x, nil
}

func (x *dirIndex) open(ctx context.Context, list bool) error {
	if _, err := x.db.ExecContext(ctx, OutboxIndexTable+logTable); err != nil {
		return indexErr(err)
	}
	unlock, err := lockDir(ctx, x.dir)
	if err != nil {
		return fmt.Errorf("mail: outbox: %w", err)
	}
	defer unlock()
	tx, s, err := x.beginRead(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	read := s
	ino, size, err := x.logStat()
	if err != nil {
		return err
	}
	if !s.known || s.inode != ino || size < s.readTo || ino == 0 {
		// A new table, or a log deleted, replaced or cut short: the rows
		// start over from the log and the directory.
		if _, err := tx.ExecContext(ctx, `DELETE FROM outbox_index`); err != nil {
			return indexErr(err)
		}
		s, list = logState{inode: ino}, true
	}
	if s.readTo, err = x.readLog(ctx, tx, s.readTo); err != nil {
		return err
	}
	now, boot := time.Now(), bootID()
	if list || s.boot != boot || now.Sub(s.listed) >= ListEvery || s.listed.After(now) {
		if err := x.list(ctx, tx); err != nil {
			return err
		}
		// The lines list appended, read back (a log it created has a
		// new inode).
		if ino, _, err = x.logStat(); err != nil {
			return err
		}
		if ino != s.inode {
			s.inode, s.readTo = ino, 0
		}
		if s.readTo, err = x.readLog(ctx, tx, s.readTo); err != nil {
			return err
		}
		s.boot, s.listed = boot, now
	}
	x.seen.Store(s.readTo)
	if s == read {
		return nil // nothing new: nothing to write
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_log (id, inode, read_to, boot, listed) VALUES (1, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET inode = excluded.inode, read_to = excluded.read_to, boot = excluded.boot, listed = excluded.listed`,
		s.inode, s.readTo, s.boot, unix(s.listed)); err != nil {
		return indexErr(err)
	}
	if err := tx.Commit(); err != nil {
		return indexErr(err)
	}
	return nil
}

// relistDirIndex makes the next open of the outbox dir's IndexDB, when
// there is one, list the directory.
func relistDirIndex(ctx context.Context, dir string) error {
	name := filepath.Join(dir, IndexDB)
	if _, err := os.Stat(name); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	db, err := store.Open(ctx, name, store.Options{Synchronous: "NORMAL"})
	if err != nil {
		return fmt.Errorf("mail: outbox: %w", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, OutboxIndexTable+logTable+`UPDATE outbox_log SET listed = 0;`); err != nil {
		return indexErr(err)
	}
	return nil
}

// Close closes IndexDB.
func (x *dirIndex) Close() error { return x.db.Close() }

// beginRead begins a transaction on the table and reads in it how far
// into the log the table goes; the caller rolls tx back or commits it.
func (x *dirIndex) beginRead(ctx context.Context) (*store.Tx, logState, error) {
	tx, err := x.db.BeginTx(ctx)
	if err != nil {
		return nil, logState{}, indexErr(err)
	}
	s, err := readLogState(ctx, tx)
	if err != nil {
		tx.Rollback()
		return nil, logState{}, err
	}
	return tx, s, nil
}

// readLogState reads the row of logTable.
func readLogState(ctx context.Context, q rowQuerier) (logState, error) {
	var s logState
	var listed int64
	err := q.QueryRowContext(ctx, `SELECT inode, read_to, boot, listed FROM outbox_log WHERE id = 1`).Scan(&s.inode, &s.readTo, &s.boot, &listed)
	if errors.Is(err, sql.ErrNoRows) {
		return logState{}, nil
	}
	if err != nil {
		return logState{}, indexErr(err)
	}
	s.listed, s.known = fromUnix(listed), true
	return s, nil
}

// logStat is the inode and size of the log; 0, 0 when it does not exist.
func (x *dirIndex) logStat() (ino, size int64, err error) {
	st, err := os.Stat(filepath.Join(x.dir, IndexFile))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("mail: outbox: %w", err)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		ino = int64(sys.Ino)
	}
	return ino, st.Size(), nil
}

// bootID tells one boot of the machine from the next ("" where the system
// does not say): a power failure may keep a file's name and lose its line
// in the log, so the first run after a reboot lists the directory. (A
// variable for the tests.)
var bootID = readBootID

func readBootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// catchUp adds the rows of the lines other runs appended to the log since
// this process last looked (most calls: one stat says there are none). A
// log deleted or replaced meanwhile is left for the next run's open.
func (x *dirIndex) catchUp(ctx context.Context) error {
	ino, size, err := x.logStat()
	if err != nil || size <= x.seen.Load() {
		return err
	}
	tx, s, err := x.beginRead(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if !s.known || s.inode != ino || size < s.readTo {
		return nil
	}
	end, err := x.readLog(ctx, tx, s.readTo)
	if err != nil {
		return err
	}
	if end != s.readTo {
		if _, err := tx.ExecContext(ctx, `UPDATE outbox_log SET read_to = ? WHERE id = 1`, end); err != nil {
			return indexErr(err)
		}
		if err := tx.Commit(); err != nil {
			return indexErr(err)
		}
	}
	x.seen.Store(end)
	return nil
}

// readLog adds the rows of the whole lines of the log from offset from,
// and returns where they end. A line that is not an index line (torn by a
// crash while it was appended) is skipped.
func (x *dirIndex) readLog(ctx context.Context, tx *store.Tx, from int64) (int64, error) {
	f, err := os.Open(filepath.Join(x.dir, IndexFile))
	if errors.Is(err, fs.ErrNotExist) {
		return from, nil
	}
	if err != nil {
		return from, fmt.Errorf("mail: outbox: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return from, fmt.Errorf("mail: outbox: read %s: %w", IndexFile, err)
	}
	end := from
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return end, nil // EOF, or a line still being written: read it next time
		}
		end += int64(len(line))
		var l indexLine
		if json.Unmarshal(line, &l) != nil || l.File == "" {
			continue
		}
		if err := x.addRow(ctx, tx, l); err != nil {
			return end, err
		}
	}
}

// addRow records the row of index line l (a later line of the same
// Message-ID and kind replaces the row: its file is the one written).
func (x *dirIndex) addRow(ctx context.Context, tx *store.Tx, l indexLine) error {
	id, ok := indexID(l.MessageID)
	if !ok {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO outbox_index (message_id, kind, path, recipient, sender, customer, created) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (message_id, kind) DO UPDATE SET path = excluded.path, recipient = excluded.recipient, sender = excluded.sender,
			customer = excluded.customer, created = excluded.created`,
		id, l.kind(), l.File, normAddr(l.To), normAddr(l.Sender), strings.ToLower(l.Customer), unix(l.Date))
	if err != nil {
		return indexErr(err)
	}
	return nil
}

// list reads the header of every file in the directory and its drafts
// directory that no row names (one listing each), and appends its line to
// the log. A file that is not a readable message is skipped: the index
// only ever adds what it can read. Called under the directory's lock.
func (x *dirIndex) list(ctx context.Context, tx *store.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT path FROM outbox_index`)
	if err != nil {
		return indexErr(err)
	}
	known := map[string]bool{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return indexErr(err)
		}
		known[p] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return indexErr(err)
	}
	for _, draft := range []bool{false, true} {
		dir, rel := x.dir, ""
		if draft {
			dir, rel = filepath.Join(x.dir, mail.DraftsDir), mail.DraftsDir+"/"
		}
		names, err := listNames(dir)
		if err != nil {
			return fmt.Errorf("mail: outbox: %w", err)
		}
		for _, name := range names {
			if mail.FileIDOf(name) == "" || known[rel+name] {
				continue
			}
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("mail: outbox: read replies: %w", err)
			}
			l, ok := readReplyHeader(filepath.Join(dir, name))
			if !ok {
				continue
			}
			l.File = rel + name
			if draft {
				l.Kind = KindDraft
			}
			if _, _, err := x.appendLine(l); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendLine adds l to the log (one write, O_APPEND) and returns where
// the line starts and ends.
func (x *dirIndex) appendLine(l indexLine) (start, end int64, err error) {
	b, err := json.Marshal(l)
	if err != nil {
		return 0, 0, fmt.Errorf("mail: outbox: index: %w", err)
	}
	b = append(b, '\n')
	f, err := os.OpenFile(filepath.Join(x.dir, IndexFile), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, 0, fmt.Errorf("mail: outbox: index: %w", err)
	}
	defer f.Close()
	// A run that crashed while appending left a line without its end: this
	// one starts on a line of its own, or it would be read as part of that
	// one and skipped with it.
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			b = append([]byte{'\n'}, b...)
		}
	}
	if _, err := f.Write(b); err != nil {
		return 0, 0, fmt.Errorf("mail: outbox: index: %w", err)
	}
	end, err = f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, 0, fmt.Errorf("mail: outbox: index: %w", err)
	}
	return end - int64(len(b)), end, f.Close()
}

// The outbox index (outboxIndex) of a directory.

// OutboxFile is the file of the row id of one of kinds.
func (x *dirIndex) OutboxFile(ctx context.Context, id string, kinds ...Kind) (string, bool, error) {
	if err := x.catchUp(ctx); err != nil {
		return "", false, err
	}
	p, ok, err := x.rows.OutboxFile(ctx, id, kinds...)
	if err != nil || !ok {
		return "", false, err
	}
	return filepath.Join(x.dir, filepath.FromSlash(p)), true, nil
}

// OutboxCount counts the rows of kinds dated at or after since whose
// recipient or sender is addr.
func (x *dirIndex) OutboxCount(ctx context.Context, addr string, since time.Time, kinds ...Kind) (int, error) {
	if err := x.catchUp(ctx); err != nil {
		return 0, err
	}
	return x.rows.OutboxCount(ctx, addr, since, kinds...)
}

// OutboxNotices counts the notices dated at or after since about
// customer ("": every notice).
func (x *dirIndex) OutboxNotices(ctx context.Context, customer string, since time.Time) (int, error) {
	if err := x.catchUp(ctx); err != nil {
		return 0, err
	}
	return x.rows.OutboxNotices(ctx, customer, since)
}

// AddOutbox appends the line of what Send is about to write to the log,
// then records its row. Called under the directory's lock, before the
// file is put in place: a crash in between leaves a line whose file is
// missing, which the next send writes (extExisting).
func (x *dirIndex) AddOutbox(ctx context.Context, id string, kind Kind, p, to, sender, customer string, date time.Time) error {
	if err := x.catchUp(ctx); err != nil {
		return err
	}
	rel, err := filepath.Rel(x.dir, p)
	if err != nil {
		return fmt.Errorf("mail: outbox: %w", err)
	}
	l := indexLine{MessageID: id, To: to, Sender: sender, Date: date, File: filepath.ToSlash(rel), Notice: kind == KindNotice, Customer: customer}
	if kind == KindDraft {
		l.Kind = KindDraft
	}
	start, end, err := x.appendLine(l)
	if err != nil {
		return err
	}
	tx, err := x.db.BeginTx(ctx)
	if err != nil {
		return indexErr(err)
	}
	defer tx.Rollback()
	if err := x.addRow(ctx, tx, l); err != nil {
		return err
	}
	// The table holds the log up to this line when it held it up to where
	// the line starts (else the next catchUp reads the line again).
	res, err := tx.ExecContext(ctx, `UPDATE outbox_log SET read_to = ? WHERE id = 1 AND read_to = ?`, end, start)
	if err != nil {
		return indexErr(err)
	}
	if err := tx.Commit(); err != nil {
		return indexErr(err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		x.seen.CompareAndSwap(start, end)
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

// indexErr names IndexDB in an error of its database.
func indexErr(err error) error {
	return fmt.Errorf("mail: outbox: %s: %w", IndexDB, err)
}
