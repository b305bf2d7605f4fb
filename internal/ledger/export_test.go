package ledger

import (
	"context"
	"fmt"
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

// Migrations and AutonomySchema let the schema tests stop the migration
// before a step.
var (
	Migrations     = migrations
	AutonomySchema = autonomySchema
)
