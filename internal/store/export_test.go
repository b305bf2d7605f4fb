package store

import "time"

// SetLockCheck sets how often l checks its connection (tests shorten it).
func SetLockCheck(l *SessionLock, d time.Duration) { l.check = d }

// Prepared is how many of db's queries are kept prepared (SQLite).
func Prepared(db *DB) int {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	n := 0
	for _, st := range db.stmts.stmts {
		if st != nil {
			n++
		}
	}
	return n
}
