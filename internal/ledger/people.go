package ledger

import (
	"context"
	"slices"
	"strings"

	"triage"
)

// What people do in the console besides closing, reopening and rejecting
// is kept in the same history (resolutions), with who did it: the
// console's activity log. ActionAssigned gives a message to a person (its
// owner: Resolution.Assignee, "" for nobody); the others record an action
// as it was done.
const (
	ActionAssigned Action = "assigned"
	ActionApproved Action = "approved"    // a draft sent as triage wrote it
	ActionEdited   Action = "sent_edited" // a draft sent with a person's edits
	ActionTookOver Action = "took_over"
	ActionReleased Action = "released" // given back to triage
	ActionNoted    Action = "noted"
	ActionRetried  Action = "retry_requested"
	ActionReplied  Action = "replied" // a person's own reply to the customer
)

// PersonActions are the actions recorded without a reason.
var PersonActions = []Action{ActionAssigned, ActionApproved, ActionEdited, ActionTookOver, ActionReleased, ActionNoted, ActionRetried, ActionReplied}

// assigneeSchema adds the person a message is assigned to.
const assigneeSchema = `ALTER TABLE resolutions ADD COLUMN assignee TEXT NOT NULL DEFAULT '';
CREATE INDEX resolutions_id ON resolutions(id);`

// Owners returns, of keys, those assigned to a person (their latest
// assignment names one), with that person.
func (l *Ledger) Owners(ctx context.Context, keys []triage.Key) (map[triage.Key]string, error) {
	out := map[triage.Key]string{}
	for chunk := range slices.Chunk(keys, 500) {
		args := make([]any, 0, len(chunk)+1)
		for _, k := range chunk {
			args = append(args, k)
		}
		args = append(args, ActionAssigned)
		rs, err := l.resolutions(ctx, `WHERE key IN (?`+strings.Repeat(",?", len(chunk)-1)+`) AND action=? ORDER BY id`, args...)
		if err != nil {
			return nil, err
		}
		for _, r := range rs { // oldest first: the latest wins
			if r.Assignee != "" {
				out[r.Key] = r.Assignee
			} else {
				delete(out, r.Key)
			}
		}
	}
	return out, nil
}

// PeopleLog is what people did in the console, newest first (at most
// limit, default 200; person "" all people's).
func (l *Ledger) PeopleLog(ctx context.Context, person string, limit int) ([]Resolution, error) {
	if limit <= 0 {
		limit = 200
	}
	if person != "" {
		return l.resolutions(ctx, `WHERE person=? ORDER BY id DESC LIMIT ?`, person, limit)
	}
	return l.resolutions(ctx, `ORDER BY id DESC LIMIT ?`, limit)
}
