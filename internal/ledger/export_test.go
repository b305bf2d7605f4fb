package ledger

import (
	"context"
	"fmt"
	"time"
)

// Ways into the ledger only its tests take.

// Abandon deletes an entry still processing, so the message is processed
// afresh on the next pass.
func (l *Ledger) Abandon(ctx context.Context, loc Loc) error {
	_, err := l.db.ExecContext(ctx, `DELETE FROM messages WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=? AND state=?`,
		loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID, StateProcessing)
	if err != nil {
		return fmt.Errorf("ledger: abandon %s: %w", loc, err)
	}
	return nil
}

// NoticesSince counts the staff notices recorded since t; a non-empty
// customer counts only those about mail from that address.
func (l *Ledger) NoticesSince(ctx context.Context, customer string, since time.Time) (int, error) {
	return countNotices(ctx, l.db, normAddr(customer), since)
}

// InState lists the reply rows in state, oldest first, at most MaxInState,
// without their rendered bytes (Raw is nil; GetReply reads them). The
// replies_state index makes its cost follow the rows in that state, not
// the ledger's history.
func (l *Ledger) InState(ctx context.Context, state ReplyState) ([]Reply, error) {
	return l.listReplies(ctx, `SELECT `+replyListCols+` FROM replies WHERE state=? ORDER BY created, key LIMIT ?`, state, MaxInState)
}
