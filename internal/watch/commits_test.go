package watch

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"modernc.org/sqlite"

	"triage/internal/testkit/mailtest"
)

// commits counts the write transactions committed on SQLite files, by the
// file's path: each is one synced commit of the file's log (the ledger
// opens its file with synchronous FULL).
var commits struct {
	once sync.Once
	mu   sync.Mutex
	by   map[string]*atomic.Int64
}

// countCommits starts counting the commits on the SQLite file at path, of
// the connections opened from now on; the counter it returns goes on
// until the test ends.
func countCommits(t testing.TB, path string) *atomic.Int64 {
	commits.once.Do(func() {
		commits.by = map[string]*atomic.Int64{}
		sqlite.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, dsn string) error {
			commits.mu.Lock()
			var n *atomic.Int64
			for p, c := range commits.by {
				if strings.HasPrefix(dsn, "file:"+p+"?") {
					n = c
				}
			}
			commits.mu.Unlock()
			if hr, ok := c.(sqlite.HookRegisterer); ok && n != nil {
				hr.RegisterCommitHook(func() int32 { n.Add(1); return 0 })
			}
			return nil
		})
	})
	n := &atomic.Int64{}
	commits.mu.Lock()
	commits.by[path] = n
	commits.mu.Unlock()
	t.Cleanup(func() {
		commits.mu.Lock()
		delete(commits.by, path)
		commits.mu.Unlock()
	})
	return n
}

// TestSyncedCommitsPerMessage counts the ledger's synced commits for a
// message answered in one pass (claimed, its reply recorded, sent and
// filed in the Sent folder, its outcome kept, its state recorded, flagged
// and moved): the pass over eleven messages less the pass over one, over
// ten. Five are left, each before or after something done outside the
// store that a crash must find recorded: the claim (before the pipeline:
// its attempt counts), the pending reply (before the submission), the
// reply sent (after it), the terminal state with the outcome kept for
// review and the reply's scenario (before the flag and the move), and the
// message settled with its reply filed in the Sent folder (after them).
func TestSyncedCommitsPerMessage(t *testing.T) {
	pass := func(n int) int64 {
		s := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
		path := t.TempDir() + "/ledger.db"
		c := countCommits(t, path)
		e := newEnvAt(t, s.Target(), path)
		for i := range n {
			e.deliver(i, fmt.Sprintf("c%d@customer.example", i), "Gwarancja")
		}
		e.limit(Limits{PerSenderLimit: 1 << 30, GlobalPerHour: 1 << 30})
		c.Store(0)
		e.runOnce(func(c *Config) { c.SentFolder, c.ProcessedFolder = "Sent", "Processed" })
		if got := len(e.sink.Messages()); got != n {
			t.Fatalf("sent %d replies, want %d", got, n)
		}
		return c.Load()
	}
	one, eleven := pass(1), pass(11)
	per := float64(eleven-one) / 10
	t.Logf("synced ledger commits: %d for a pass over one message, %d over eleven: %.1f a message", one, eleven, per)
	if per > 5 {
		t.Errorf("%.1f synced ledger commits a message, want at most 5", per)
	}
}
