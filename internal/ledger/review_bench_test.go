package ledger

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"triage"
)

// BenchmarkByRef finds one conversation by its ref in a ledger of 50000
// messages (a year of a busy inbox): ByRef reads every key.
func BenchmarkByRef(b *testing.B) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l, err := Open(ctx, Config{Path: filepath.Join(b.TempDir(), "ledger.db"), Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	tx, err := l.db.BeginTx(ctx)
	if err != nil {
		b.Fatal(err)
	}
	const n = 50000
	for i := range n {
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (account, mailbox, uidvalidity, uid, key, state, created, updated) VALUES ('a','INBOX',1,?,?,'replied',?,?)`,
			i+1, fmt.Sprintf("msgid:<m%d@customer.example>|c%d@example.com", i, i), i, i); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	ref := triage.Key(fmt.Sprintf("msgid:<m%d@customer.example>|c%d@example.com", n/2, n/2)).Ref()
	b.ResetTimer()
	for b.Loop() {
		if es, err := l.ByRef(ctx, ref); err != nil || len(es) != 1 {
			b.Fatalf("ByRef = %d entries, %v", len(es), err)
		}
	}
}
