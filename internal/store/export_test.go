package store

import "time"

// SetLockCheck sets how often l checks its connection (tests shorten it).
func SetLockCheck(l *SessionLock, d time.Duration) { l.check = d }
