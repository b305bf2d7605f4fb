package replies

import (
	"context"
	"time"
)

// Ways into the reply memory only its tests take.

// NoticesSince counts the staff notices recorded since t; a non-empty
// customer counts only those about mail from that address.
func (s *Store) NoticesSince(ctx context.Context, customer string, since time.Time) (int, error) {
	return countNotices(ctx, s.db, normAddr(customer), since)
}

// InState lists the reply rows in state, oldest first, at most MaxInState,
// without their rendered bytes (Raw is nil; GetReply reads them). The
// replies_state index makes its cost follow the rows in that state, not
// the ledger's history.
func (s *Store) InState(ctx context.Context, state ReplyState) ([]Reply, error) {
	return s.listReplies(ctx, `SELECT `+replyListCols+` FROM replies WHERE state=? ORDER BY created, key LIMIT ?`, state, MaxInState)
}

// CountRepliesQuery and CountNoticesQuery are the queries of the reply
// limits and the notice bounds, for the tests of their plans.
var (
	CountRepliesQuery = countRepliesQuery
	CountNoticesQuery = countNoticesQuery
)

// RejectedInDraftsQuery and DiscardStaleDraftsQuery are the draft queries
// of every watch pass, for the tests of their plans.
var (
	RejectedInDraftsQuery   = rejectedInDraftsQuery
	DiscardStaleDraftsQuery = discardStaleDraftsQuery
)
