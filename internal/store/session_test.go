package store_test

import (
	"context"
	"testing"
	"time"

	"triage/internal/store"
	"triage/internal/testkit/pgtest"
)

// One holder at a time, across processes (separate stores stand for them):
// the lock passes on when its holder releases it or its connection dies
// (the server frees a session lock with its session), and the holder
// learns it lost it.
func TestSessionLock(t *testing.T) {
	ctx := context.Background()
	pgtest.Each(t, func(t *testing.T, target string) {
		a, b := open(t, target), open(t, target)
		la, lb := a.SessionLock("poll:inbox"), b.SessionLock("poll:inbox")
		if target == "" || !store.IsURL(target) {
			// SQLite: within one process only, by the store's path.
			lb = a.SessionLock("poll:inbox")
		}
		store.SetLockCheck(la, 50*time.Millisecond)
		store.SetLockCheck(lb, 50*time.Millisecond)
		defer la.Release()
		defer lb.Release()
		if ok, err := la.TryAcquire(ctx); !ok || err != nil {
			t.Fatalf("first TryAcquire = %v, %v; want held", ok, err)
		}
		if ok, err := la.TryAcquire(ctx); !ok || err != nil {
			t.Errorf("TryAcquire by the holder = %v, %v; want held", ok, err)
		}
		if ok, err := lb.TryAcquire(ctx); ok || err != nil {
			t.Fatalf("second holder: TryAcquire = %v, %v; want not held", ok, err)
		}
		if other := a.SessionLock("poll:other"); true {
			if ok, err := other.TryAcquire(ctx); !ok || err != nil {
				t.Errorf("another name: TryAcquire = %v, %v; want held", ok, err)
			}
			other.Release()
		}
		select {
		case <-la.Lost():
			t.Fatal("Lost closed while held")
		default:
		}
		la.Release()
		if ok, err := lb.TryAcquire(ctx); !ok || err != nil {
			t.Fatalf("after Release: TryAcquire = %v, %v; want held", ok, err)
		}
		if !store.IsURL(target) {
			return
		}
		// The holder's session dies: the server frees the lock, the holder
		// sees it lost, the other takes it.
		lb.Release()
		if ok, _ := la.TryAcquire(ctx); !ok {
			t.Fatal("re-acquire after release")
		}
		if _, err := b.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
		select {
		case <-la.Lost():
		case <-time.After(10 * time.Second):
			t.Fatal("the holder did not notice its session ended")
		}
		if la.Held() {
			t.Error("Held after the session ended")
		}
		if ok, err := lb.TryAcquire(ctx); !ok || err != nil {
			t.Errorf("after the holder's session ended: TryAcquire = %v, %v; want held", ok, err)
		}
	})
}
