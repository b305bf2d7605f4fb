// Package store opens the database triage keeps its durable state in (the
// ledger and the local tickets) and hides the few differences between its
// two backends: a SQLite file, the embedded default for one machine, and
// PostgreSQL, the store several daemons share.
//
// Callers write their SQL once, with `?` placeholders and the syntax both
// backends accept (INSERT ... ON CONFLICT, RETURNING); DB and Tx rewrite the
// placeholders for PostgreSQL. What differs beyond that is explicit: the
// schema (Migration carries one script per dialect) and locking: Tx.Lock
// for the length of a transaction, SessionLock for the life of a process
// (which of several daemons polls an inbox).
//
// Text is stored the same in both backends: every string argument a query
// is given passes through Text, which replaces a NUL byte and each invalid
// UTF-8 sequence by U+FFFD. PostgreSQL's text cannot hold either (the
// statement fails), and a customer's mail may carry both; SQLite would keep
// them, so what one backend reads back would differ from the other's.
// Bytes ([]byte, BLOB/BYTEA) are stored as they are.
//
// The schema is versioned per component (ledger, tickets) in the
// schema_versions table and only ever moves forward; Migrate runs the
// missing steps at start, one process at a time.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

// Dialect is the kind of database behind a DB.
type Dialect int

// The dialects.
const (
	SQLite Dialect = iota + 1
	Postgres
)

func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	}
	return "unknown"
}

// Options configure Open.
type Options struct {
	// ReadOnly opens without writing anything, not even the schema: a
	// SQLite file must exist; PostgreSQL transactions are read-only.
	ReadOnly bool
	// Synchronous is SQLite's synchronous pragma for a writable file
	// (default FULL); PostgreSQL ignores it.
	Synchronous string
}

// DB is an open store: a *sql.DB whose queries take `?` placeholders on
// either backend. It is safe for concurrent use.
type DB struct {
	db       *sql.DB
	pool     *pgxpool.Pool // Postgres only
	dialect  Dialect
	name     string
	readOnly bool
	stmts    *stmtCache // SQLite only
}

// IsURL reports whether target names a PostgreSQL server rather than a
// SQLite file.
func IsURL(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// Open opens target: a postgres:// (or postgresql://) URL, or the path of
// a SQLite file (created when missing unless opts.ReadOnly).
func Open(ctx context.Context, target string, opts Options) (*DB, error) {
	if target == "" {
		return nil, errors.New("store: no path or URL")
	}
	if IsURL(target) {
		return openPostgres(ctx, target, opts)
	}
	return openSQLite(ctx, target, opts)
}

func openSQLite(ctx context.Context, path string, opts Options) (*DB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	if opts.ReadOnly {
		q.Set("mode", "ro")
		if _, err := os.Stat(path + "-wal"); errors.Is(err, fs.ErrNotExist) {
			// No writer has the file open: reading it as immutable keeps
			// SQLite from creating the -wal and -shm files a reader of a
			// WAL-mode database otherwise leaves behind.
			q.Set("immutable", "1")
		}
	} else {
		sync := opts.Synchronous
		if sync == "" {
			sync = "FULL"
		}
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous("+sync+")")
	}
	// Every transaction takes the write lock when it begins: a transaction
	// that reads, then writes (a limit check, a ticket lookup and insert)
	// is atomic across goroutines and processes.
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+uriPath.Replace(path)+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// One connection: goroutines queue in database/sql instead of spinning
	// in SQLite's busy handler; other processes wait on the file lock.
	db.SetMaxOpenConns(1)
	if err := pingSQLite(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return &DB{db: db, dialect: SQLite, name: path, readOnly: opts.ReadOnly, stmts: &stmtCache{}}, nil
}

// pingSQLite opens the first connection, which runs the pragmas. Turning
// a new file to WAL needs the file to itself, and SQLite reports that busy
// at once rather than waiting (busy_timeout): several processes opening a
// new store at the same moment retry for a while.
func pingSQLite(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(10 * time.Second)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
		err := db.PingContext(ctx)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

func openPostgres(ctx context.Context, rawURL string, opts Options) (*DB, error) {
	name := Redact(rawURL)
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", name, err)
	}
	if opts.ReadOnly {
		cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", name, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: %s: %w", name, err)
	}
	return &DB{db: stdlib.OpenDBFromPool(pool), pool: pool, dialect: Postgres, name: name, readOnly: opts.ReadOnly}, nil
}

// Redact is rawURL without its password, for messages and logs.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	return u.Redacted()
}

// Dialect is the backend's dialect.
func (db *DB) Dialect() Dialect { return db.dialect }

// Name is the SQLite path or the PostgreSQL URL without its password.
func (db *DB) Name() string { return db.name }

// ReadOnly reports whether the store was opened read-only.
func (db *DB) ReadOnly() bool { return db.readOnly }

// Close closes the database (and the PostgreSQL pool).
func (db *DB) Close() error {
	db.stmts.close()
	err := db.db.Close()
	if db.pool != nil {
		db.pool.Close()
	}
	return err
}

// Rebind rewrites the `?` placeholders of query for the backend.
func (db *DB) Rebind(query string) string {
	if db.dialect != Postgres {
		return query
	}
	return rebindDollar(query)
}

// ExecContext is sql.DB.ExecContext with `?` placeholders.
func (db *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	args = textArgs(args)
	if st := db.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return db.db.ExecContext(ctx, db.Rebind(query), args...)
}

// QueryContext is sql.DB.QueryContext with `?` placeholders.
func (db *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	args = textArgs(args)
	if st := db.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return db.db.QueryContext(ctx, db.Rebind(query), args...)
}

// QueryRowContext is sql.DB.QueryRowContext with `?` placeholders.
func (db *DB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	args = textArgs(args)
	if st := db.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return db.db.QueryRowContext(ctx, db.Rebind(query), args...)
}

// BeginTx starts a transaction. On SQLite it holds the write lock from the
// start; on PostgreSQL it runs at READ COMMITTED: take Tx.Lock before a
// read that a later write depends on.
func (db *DB) BeginTx(ctx context.Context) (*Tx, error) {
	db.stmts.prepareWanted(ctx, db.db)
	tx, err := db.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &Tx{tx: tx, db: db}, nil
}

// stmt is query's prepared statement, prepared now when it is not yet;
// nil when statements are not kept (PostgreSQL: pgx keeps its own) or
// query's does not prepare.
func (db *DB) stmt(ctx context.Context, query string) *sql.Stmt {
	if db.stmts == nil {
		return nil
	}
	if st, known := db.stmts.get(query); known {
		return st
	}
	db.stmts.want(query)
	db.stmts.prepareWanted(ctx, db.db)
	st, _ := db.stmts.get(query)
	return st
}

// stmtCache keeps SQLite's prepared statements, by query, so a query
// that runs for every email is parsed and planned once per process rather
// than every time (pgx does the same for PostgreSQL by itself). A query
// first seen inside a transaction cannot be prepared there (the store's
// one connection is the transaction's), so it is prepared when the next
// transaction begins. At most maxStmts queries are kept.
type stmtCache struct {
	mu sync.Mutex
	// stmts are the prepared statements; nil for a query that did not
	// prepare (it runs unprepared, and reports its error there).
	stmts  map[string]*sql.Stmt
	wanted map[string]bool
	closed bool
}

const maxStmts = 128

// get is query's statement; known is false when query was never prepared.
func (c *stmtCache) get(query string) (st *sql.Stmt, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, known = c.stmts[query]
	return st, known
}

// want asks for query to be prepared at the next chance.
func (c *stmtCache) want(query string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || len(c.stmts)+len(c.wanted) >= maxStmts {
		return
	}
	if c.wanted == nil {
		c.wanted = map[string]bool{}
	}
	c.wanted[query] = true
}

// prepareWanted prepares the queries asked for. It must not run while the
// caller holds the store's connection (in a transaction); it waits for the
// connection without holding the cache, which transactions read.
func (c *stmtCache) prepareWanted(ctx context.Context, db *sql.DB) {
	if c == nil {
		return
	}
	c.mu.Lock()
	var queries []string
	for q := range c.wanted {
		if _, known := c.stmts[q]; !known {
			queries = append(queries, q)
		}
	}
	clear(c.wanted)
	c.mu.Unlock()
	for _, q := range queries {
		st, err := db.PrepareContext(ctx, q)
		if err != nil && ctx.Err() != nil {
			c.want(q) // not the query's fault: asked for again
			continue
		}
		c.mu.Lock()
		if _, known := c.stmts[q]; known || c.closed {
			// Prepared meanwhile by another caller, or the store closed.
			if st != nil {
				st.Close()
			}
		} else {
			if c.stmts == nil {
				c.stmts = map[string]*sql.Stmt{}
			}
			c.stmts[q] = st // nil when it did not prepare: it runs unprepared
		}
		c.mu.Unlock()
	}
}

func (c *stmtCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		if st != nil {
			st.Close()
		}
	}
	c.stmts, c.wanted, c.closed = nil, nil, true
}

// Tx is a transaction with `?` placeholders.
type Tx struct {
	tx *sql.Tx
	db *DB
}

// ExecContext is sql.Tx.ExecContext with `?` placeholders.
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	args = textArgs(args)
	if st := tx.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return tx.tx.ExecContext(ctx, tx.db.Rebind(query), args...)
}

// QueryContext is sql.Tx.QueryContext with `?` placeholders.
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	args = textArgs(args)
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return tx.tx.QueryContext(ctx, tx.db.Rebind(query), args...)
}

// QueryRowContext is sql.Tx.QueryRowContext with `?` placeholders.
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	args = textArgs(args)
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return tx.tx.QueryRowContext(ctx, tx.db.Rebind(query), args...)
}

// stmt is the store's prepared statement of query, for this transaction;
// nil when there is none (yet: a query never seen is asked for).
func (tx *Tx) stmt(ctx context.Context, query string) *sql.Stmt {
	if tx.db.stmts == nil {
		return nil
	}
	st, known := tx.db.stmts.get(query)
	if !known {
		tx.db.stmts.want(query)
	}
	if st == nil {
		return nil
	}
	return tx.tx.StmtContext(ctx, st)
}

// Commit commits the transaction.
func (tx *Tx) Commit() error { return tx.tx.Commit() }

// Rollback aborts the transaction; after Commit it is a no-op.
func (tx *Tx) Rollback() error { return tx.tx.Rollback() }

// Dialect is the backend's dialect.
func (tx *Tx) Dialect() Dialect { return tx.db.dialect }

// Lock serialises the transactions that take the lock called name, across
// processes, until this one ends. SQLite transactions are already
// serialised (they begin with the write lock); on PostgreSQL it is a
// transaction-level advisory lock.
func (tx *Tx) Lock(ctx context.Context, name string) error {
	if tx.db.dialect != Postgres {
		return nil
	}
	if _, err := tx.tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, LockID(name)); err != nil {
		return fmt.Errorf("store: lock %s: %w", name, err)
	}
	return nil
}

// LockID is the advisory lock key of a lock name: a stable 64-bit FNV-1a
// hash of "triage:" + name, so other applications on the same server are
// unlikely to collide with it.
func LockID(name string) int64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, c := range []byte("triage:" + name) {
		h ^= uint64(c)
		h *= prime
	}
	return int64(h)
}

// rebindDollar turns each `?` outside a quoted string or identifier into
// $1, $2, ...
func rebindDollar(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// uriPath escapes the characters that would end the file name in a "file:"
// DSN (a store in "/srv/mail#2/" must not open "/srv/mail").
var uriPath = strings.NewReplacer("%", "%25", "#", "%23", "?", "%3f")
