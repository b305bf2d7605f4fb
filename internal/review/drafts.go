package review

import (
	"context"
	"fmt"
	"time"

	"triage"
	"triage/internal/replies"
)

// What became of the drafts: resolved by a person's reply in the Sent
// folder (sent as is or edited), rejected in the console, or discarded when
// nobody answered within the draft window; and the figures over them. The
// outcomes are replies.DraftSentAsIs, DraftEdited, DraftRejected and
// DraftDiscarded, kept on the draft's row (replies.Store reads and writes
// them).

// ResolveDraft records what a person did with the draft of key: outcome,
// the similarity of their reply to the draft, and the reply's Message-ID.
// Only the first resolution counts: it reports false when the key has no
// draft or its outcome is already known.
func (s *Store) ResolveDraft(ctx context.Context, key triage.Key, outcome string, similarity float64, personMessageID string) (bool, error) {
	switch outcome {
	case replies.DraftSentAsIs, replies.DraftEdited, replies.DraftDiscarded:
	default:
		return false, fmt.Errorf("review: resolve draft: unknown outcome %q", outcome)
	}
	return s.replies.SetDraftOutcome(ctx, key, outcome, similarity, personMessageID)
}

// DiscardStaleDrafts marks discarded every draft of the inbox (account,
// mailbox) without an outcome that was recorded before t, and returns how
// many. Another inbox's drafts wait for its own Sent folder.
func (s *Store) DiscardStaleDrafts(ctx context.Context, account, mailbox string, before time.Time) (int, error) {
	return s.replies.DiscardStaleDrafts(ctx, account, mailbox, before)
}

// DraftStat is what became of one scenario's drafts in one inbox.
type DraftStat struct {
	Scenario string `json:"scenario"`
	triage.Inbox
	Drafted   int `json:"drafted"`
	SentAsIs  int `json:"sent_as_is"`
	Edited    int `json:"edited"`
	Rejected  int `json:"rejected"`
	Discarded int `json:"discarded"`
	Pending   int `json:"pending"` // no outcome yet
}

// Add adds o's counts to s (its scenario and inbox stay).
func (s *DraftStat) Add(o DraftStat) {
	s.Drafted += o.Drafted
	s.SentAsIs += o.SentAsIs
	s.Edited += o.Edited
	s.Rejected += o.Rejected
	s.Discarded += o.Discarded
	s.Pending += o.Pending
}

// Reviewed counts the drafts whose fate is known: sent as is, edited,
// rejected or discarded.
func (s DraftStat) Reviewed() int { return s.SentAsIs + s.Edited + s.Rejected + s.Discarded }

// DraftStats counts drafts by scenario and inbox (those their message was
// handled in; "" when unknown, e.g. a draft recovered after a crash) and
// outcome, sorted by scenario, account and mailbox.
func (s *Store) DraftStats(ctx context.Context) ([]DraftStat, error) {
	counts, err := s.replies.DraftCounts(ctx)
	if err != nil {
		return nil, err
	}
	var out []DraftStat
	for _, c := range counts {
		out = append(out, DraftStat(c))
	}
	return out, nil
}

// DraftFate is one resolved draft: what a person did with it and when.
type DraftFate struct {
	Scenario   string
	Outcome    string // replies.DraftSentAsIs, replies.DraftEdited, replies.DraftRejected or replies.DraftDiscarded
	Similarity float64
	ResolvedAt time.Time
}

// DraftFates lists the resolved drafts, oldest resolution first.
func (s *Store) DraftFates(ctx context.Context) ([]DraftFate, error) {
	outcomes, err := s.replies.DraftOutcomes(ctx)
	if err != nil {
		return nil, err
	}
	var out []DraftFate
	for _, o := range outcomes {
		out = append(out, DraftFate(o))
	}
	return out, nil
}

// RejectDraft records that a person rejected the unresolved draft of key
// in the console (replies.DraftRejected: told apart from a draft nobody
// answered, it stops reply mode auto from sending);
// replies.ErrDraftTaken when it is resolved or being sent.
func (s *Store) RejectDraft(ctx context.Context, key triage.Key) error {
	return s.replies.RejectDraft(ctx, key)
}
