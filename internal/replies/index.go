package replies

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The outbox index of triage process --store (Index): one row per
// reply, draft and staff notice an outbox directory holds, by Message-ID
// (lower case, without brackets) and Kind, so a run never reads the
// directory.

// IndexRow is one row of the outbox index: where the reply, draft or staff
// notice with a Message-ID (ID, lower case) of a Kind went, to whom,
// answering mail from Sender, about Customer (a notice), dated Date. The
// outbox writes them; the store keeps them.
type IndexRow struct {
	ID                         string
	Kind                       Kind
	Path, To, Sender, Customer string
	Date                       time.Time
}

// OutboxFile returns the file of the row id of one of kinds.
func (s *Store) OutboxFile(ctx context.Context, id string, kinds ...Kind) (string, bool, error) {
	if len(kinds) == 0 {
		return "", false, nil
	}
	args := []any{id}
	for _, k := range kinds {
		args = append(args, k)
	}
	var path string
	err := s.db.QueryRowContext(ctx, `SELECT path FROM outbox_index WHERE message_id = ? AND kind IN (?`+strings.Repeat(",?", len(kinds)-1)+`) LIMIT 1`,
		args...).Scan(&path)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("replies: outbox index %s: %w", id, err)
	}
	return path, true, nil
}

// OutboxCount counts the rows of kinds dated at or after since whose
// recipient or sender (of the message answered) is addr.
func (s *Store) OutboxCount(ctx context.Context, addr string, since time.Time, kinds ...Kind) (int, error) {
	if len(kinds) == 0 || addr == "" {
		return 0, nil
	}
	addr = normAddr(addr)
	in := `kind IN (?` + strings.Repeat(",?", len(kinds)-1) + `)`
	args := []any{}
	for _, k := range kinds {
		args = append(args, k)
	}
	// Two indexed look-ups (by recipient, by sender); a row to and from
	// the same address counts once.
	q := `SELECT COUNT(*) FROM (
		SELECT message_id, kind FROM outbox_index WHERE recipient = ? AND created >= ? AND ` + in + `
		UNION
		SELECT message_id, kind FROM outbox_index WHERE sender = ? AND created >= ? AND ` + in + `) AS against`
	all := append(append([]any{addr, unix(since)}, args...), append([]any{addr, unix(since)}, args...)...)
	var n int
	if err := s.db.QueryRowContext(ctx, q, all...).Scan(&n); err != nil {
		return 0, fmt.Errorf("replies: outbox count %s: %w", addr, err)
	}
	return n, nil
}

// OutboxNotices counts the staff notices dated at or after since about
// customer ("": every notice).
func (s *Store) OutboxNotices(ctx context.Context, customer string, since time.Time) (int, error) {
	q, args := `SELECT COUNT(*) FROM outbox_index WHERE kind = ? AND created >= ?`, []any{KindNotice, unix(since)}
	if customer != "" {
		q, args = `SELECT COUNT(*) FROM outbox_index WHERE kind = ? AND customer = ? AND created >= ?`, []any{KindNotice, normAddr(customer), unix(since)}
	}
	var n int
	if err := s.db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("replies: outbox notices: %w", err)
	}
	return n, nil
}

// AddOutbox records one row of the outbox index, replacing the row of the
// same Message-ID and kind.
func (s *Store) AddOutbox(ctx context.Context, id string, kind Kind, path, to, sender, customer string, date time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO outbox_index (message_id, kind, path, recipient, sender, customer, created) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (message_id, kind) DO UPDATE SET path = excluded.path, recipient = excluded.recipient, sender = excluded.sender,
			customer = excluded.customer, created = excluded.created`,
		id, kind, path, normAddr(to), normAddr(sender), normAddr(customer), unix(date))
	if err != nil {
		return fmt.Errorf("replies: outbox index %s: %w", id, err)
	}
	return nil
}

// AddOutboxRows records rows of the outbox index in one transaction (an
// outbox directory's index copied into the store).
func (s *Store) AddOutboxRows(ctx context.Context, rows []IndexRow) error {
	tx, err := s.db.BeginTx(ctx)
	if err != nil {
		return fmt.Errorf("replies: outbox index: %w", err)
	}
	defer tx.Rollback()
	for _, r := range rows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_index (message_id, kind, path, recipient, sender, customer, created) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (message_id, kind) DO NOTHING`,
			r.ID, r.Kind, r.Path, normAddr(r.To), normAddr(r.Sender), normAddr(r.Customer), unix(r.Date)); err != nil {
			return fmt.Errorf("replies: outbox index %s: %w", r.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("replies: outbox index: %w", err)
	}
	return nil
}
