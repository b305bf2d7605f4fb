package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// SessionLock is a lock held for as long as its holder lives: on
// PostgreSQL a session-level advisory lock on a connection of its own (not
// one of the pool's), which the server frees the moment that connection
// ends, so a process that dies (killed, crashed, its machine gone once
// TCP gives up) frees it with no cleanup. Several processes may contend
// for one name; at most one holds it. On SQLite, whose store serves one
// machine, it only excludes the holders within the process.
type SessionLock struct {
	db    *DB
	name  string
	id    int64
	check time.Duration

	mu   sync.Mutex
	conn *pgx.Conn     // Postgres: the connection that holds (or tries for) the lock
	held bool          // this SessionLock holds the lock
	lost chan struct{} // closed when a held lock is lost; replaced on each acquisition
	done chan struct{} // stops the keepalive of the current hold
}

// DefaultLockCheck is how often a held session lock checks that its
// connection is alive.
const DefaultLockCheck = 5 * time.Second

// SessionLock returns the session lock called name (not yet held).
func (db *DB) SessionLock(name string) *SessionLock {
	return &SessionLock{db: db, name: name, id: LockID("session:" + name), check: DefaultLockCheck}
}

var (
	localMu    sync.Mutex
	localHeld  = map[string]bool{} // SQLite: "path\x00name" held in this process
	closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()
)

// TryAcquire takes the lock unless another holder has it; it reports
// whether this SessionLock holds it (true again when it already did). It
// never waits for the holder.
func (l *SessionLock) TryAcquire(ctx context.Context) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		return true, nil
	}
	if l.db.dialect != Postgres {
		localMu.Lock()
		defer localMu.Unlock()
		k := l.db.name + "\x00" + l.name
		if localHeld[k] {
			return false, nil
		}
		localHeld[k] = true
		l.held, l.lost = true, make(chan struct{})
		return true, nil
	}
	if l.conn == nil || l.conn.IsClosed() {
		conn, err := pgx.ConnectConfig(ctx, l.db.pool.Config().ConnConfig.Copy())
		if err != nil {
			return false, fmt.Errorf("store: session lock %s: %w", l.name, err)
		}
		l.conn = conn
	}
	var ok bool
	if err := l.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, l.id).Scan(&ok); err != nil {
		l.conn.Close(context.Background())
		l.conn = nil
		return false, fmt.Errorf("store: session lock %s: %w", l.name, err)
	}
	if !ok {
		return false, nil
	}
	l.held, l.lost, l.done = true, make(chan struct{}), make(chan struct{})
	go l.keepalive(l.conn, l.check, l.lost, l.done)
	return true, nil
}

// keepalive pings the holding connection; when it fails the lock is gone
// (the server frees it with the connection): lost is closed.
func (l *SessionLock) keepalive(conn *pgx.Conn, check time.Duration, lost, done chan struct{}) {
	t := time.NewTicker(check)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		l.mu.Lock()
		if l.conn != conn || !l.held {
			l.mu.Unlock()
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*check)
		err := conn.Ping(ctx)
		cancel()
		if err != nil {
			conn.Close(context.Background())
			l.conn, l.held = nil, false
			close(lost)
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
}

// Held reports whether this SessionLock holds the lock.
func (l *SessionLock) Held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// Lost returns a channel closed when the lock held now is lost (its
// connection died). When the lock is not held, the channel is closed.
func (l *SessionLock) Lost() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		return closedChan
	}
	return l.lost
}

// Release gives the lock up (when held) and closes the connection.
func (l *SessionLock) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.db.dialect != Postgres {
		if l.held {
			localMu.Lock()
			delete(localHeld, l.db.name+"\x00"+l.name)
			localMu.Unlock()
			l.held = false
			close(l.lost)
		}
		return
	}
	if l.held {
		close(l.done)
		close(l.lost)
		l.held = false
	}
	if l.conn != nil {
		// Closing the connection frees the lock; unlocking first frees it
		// even if the close is slow to reach the server.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		l.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, l.id)
		l.conn.Close(ctx)
		cancel()
		l.conn = nil
	}
}
