// Package ledgertest fills a ledger with a synthetic history, fast, so
// benchmarks can measure what a pass or a listing costs at 300, 10,000 or
// 100,000 earlier messages.
package ledgertest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/store"
)

// History is what Fill writes: Messages settled inbound messages of
// (Account, Mailbox, UIDValidity) with UIDs 1..Messages, each answered by a
// sent reply of RawBytes bytes, except every DraftEvery-th one, which has a
// draft instead (resolved in turn as sent as is, edited, discarded, or
// still open).
type History struct {
	Account     string
	Mailbox     string // default INBOX
	UIDValidity uint32
	Messages    int
	RawBytes    int // default 3000, a typical rendered reply
	DraftEvery  int // 0: no drafts
	Start       time.Time
}

// Fill writes h into the ledger store at target (a SQLite file or a
// postgres:// URL; the ledger must have been opened there once, so its
// schema exists), in one transaction.
func Fill(tb testing.TB, target string, h History) {
	tb.Helper()
	if h.Mailbox == "" {
		h.Mailbox = "INBOX"
	}
	if h.RawBytes <= 0 {
		h.RawBytes = 3000
	}
	if h.Start.IsZero() {
		h.Start = time.Now().Add(-time.Duration(h.Messages) * time.Minute)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, target, store.Options{Synchronous: "OFF"})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	body := strings.Repeat("Dziękujemy za wiadomość. ", h.RawBytes/26+1)[:h.RawBytes]
	outcomes := []string{replies.DraftSentAsIs, replies.DraftEdited, replies.DraftDiscarded, ""}
	for i := 1; i <= h.Messages; i++ {
		at := h.Start.Add(time.Duration(i) * time.Minute).UnixMilli()
		key := fmt.Sprintf("msgid:<m%d@customer.example>|c%d@customer.example", i, i%5000)
		sender := fmt.Sprintf("c%d@customer.example", i%5000)
		scenario := []string{"valid-warranty", "expired-warranty", "missing-serial"}[i%3]
		state := ledger.StateReplied
		kind, rstate, outcome := replies.KindReply, replies.ReplySent, ""
		if h.DraftEvery > 0 && i%h.DraftEvery == 0 {
			state, kind, rstate = ledger.StateDrafted, replies.KindDraft, replies.DraftStored
			outcome = outcomes[(i/h.DraftEvery)%len(outcomes)]
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (account, mailbox, uidvalidity, uid, key, message_id, sender, subject, state, scenario, attempts, imap_done, created, updated)
			VALUES (?,?,?,?,?,?,?,?,?,?,1,1,?,?)`,
			h.Account, h.Mailbox, h.UIDValidity, i, key, fmt.Sprintf("<m%d@customer.example>", i), sender, fmt.Sprintf("Gwarancja %d", i),
			state, scenario, at, at); err != nil {
			tb.Fatal(err)
		}
		raw := fmt.Sprintf("Message-ID: <r%d@example.com>\r\nTo: %s\r\nSubject: Re: Gwarancja %d\r\n\r\n%s", i, sender, i, body)
		if _, err := tx.ExecContext(ctx, `INSERT INTO replies (key, message_id, recipient, sender, raw, state, appended, created, sent_at, kind, outcome, scenario, account, mailbox)
			VALUES (?,?,?,?,?,?,1,?,?,?,?,?,?,?)`,
			key, fmt.Sprintf("<r%d@example.com>", i), sender, sender, []byte(raw), rstate, at, at, kind, outcome, scenario, h.Account, h.Mailbox); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// Filled opens a SQLite ledger in a temporary directory holding n messages,
// each with its reply (every tenth a draft), the history the listing
// benchmarks measure at; it is closed when the test ends.
func Filled(tb testing.TB, n int) *ledger.Ledger {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "ledger.db")
	l, err := ledger.Open(context.Background(), ledger.Config{Path: path})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	Fill(tb, path, History{Account: "a", UIDValidity: 1, Messages: n, DraftEvery: 10})
	return l
}
