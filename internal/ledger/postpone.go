package ledger

import (
	"context"

	"triage"
	"triage/internal/clip"
)

// Postpone leaves the entry at loc processing, for a later pass, with the
// reason and detail of why (e.g. a reply the mail server refused for now):
// the next pass's Begin counts another attempt, and the final Record
// replaces both. Unlike Abandon it keeps the attempts made.
func (l *Ledger) Postpone(ctx context.Context, loc Loc, reason triage.Reason, detail string) error {
	res, err := l.db.ExecContext(ctx, `UPDATE messages SET reason=?, detail=?, updated=?
		WHERE account=? AND mailbox=? AND uidvalidity=? AND uid=? AND state=?`,
		reason, clip.Bytes(detail, triage.MaxDetail, ""), unix(l.now()), loc.Account, loc.Mailbox, loc.UIDValidity, loc.UID, StateProcessing)
	return checkOne(res, err, "postpone", loc)
}
