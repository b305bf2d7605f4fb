package console

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"triage"
	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/replies"
)

// Why an email waits for a person (queueItem.Why): its ledger state, or
// what the queue reads from its reply and outcome.
const (
	WhyDraft      = "draft"                            // a draft to review
	WhyNeedsHuman = string(ledger.StateNeedsHuman)     // moved to the Needs-Human folder
	WhyFailed     = string(ledger.StateFailed)         // failed: left for a person
	WhyOverLimit  = string(ledger.StateOverLimit)      // a reply would have passed a limit
	WhyEscalated  = "escalated"                        // staff were told; a person owns it
	WhySending    = "send_unconfirmed"                 // approved in the console, perhaps not sent
	WhyRetry      = string(ledger.StateRetryRequested) // waits for watch's next pass
)

// MaxQueue bounds the entries the queue looks at.
const MaxQueue = 1000

type queueItem struct {
	Ref    string
	Entry  ledger.Stored
	Why    string
	Inbox  string
	Ticket string
	// NoticeSuppressed: a notice bound refused its staff notice, so staff
	// were not told (processor.Outcome.NoticeSuppressed): marked.
	NoticeSuppressed bool
	// Due is the running complaint clock of the email (its answer
	// deadline; ledger.Complaint), nil when none runs.
	Due *ledger.Complaint
}

type queueView struct {
	Items                        []queueItem
	Inboxes, Scenarios, Reasons  []string
	Inbox, Scenario, Reason, Age string
	Ages                         []string
	// Sort is SortDue (the soonest answer deadline first) or "" (waiting
	// longest first).
	Sort  string
	Total int
}

// SortDue orders the queue by complaint deadline: the complaints whose
// deadline is soonest (overdue first), then the rest, waiting longest first.
const SortDue = "due"

// byDeadline orders items as SortDue does (a stable sort keeps the rest
// waiting longest first).
func byDeadline(items []queueItem) {
	slices.SortStableFunc(items, func(a, b queueItem) int {
		switch {
		case a.Due == nil && b.Due == nil:
			return 0
		case a.Due == nil:
			return 1
		case b.Due == nil:
			return -1
		}
		return a.Due.AnswerBy.Compare(b.Due.AnswerBy)
	})
}

// ageFilters are the queue's age choices: waiting at least this long.
var ageFilters = map[string]time.Duration{"1h": time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour}

// queue lists everything waiting for a person, oldest first: drafts to
// review, failed and Needs-Human mail, mail over a limit, escalations.
// Filters (inbox, scenario, reason, age) are query parameters chosen from
// the values present; sort=due puts the complaints first, the soonest
// answer deadline first. A complaint shows the time left to answer it.
func (s *Server) queue(w http.ResponseWriter, r *http.Request) {
	items, err := s.waiting(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	v := queueView{Inbox: q.Get("inbox"), Scenario: q.Get("scenario"), Reason: q.Get("reason"), Age: q.Get("age"), Ages: []string{"1h", "24h", "7d"}, Total: len(items)}
	if v.Sort = q.Get("sort"); v.Sort != SortDue {
		v.Sort = "" // waiting longest first
	}
	minAge, ok := ageFilters[v.Age]
	if !ok {
		v.Age = "" // not a choice (a hand-edited link): any age, as the page shows
	}
	now := s.cfg.Now()
	for _, it := range items {
		v.Inboxes = appendNew(v.Inboxes, it.Inbox)
		v.Scenarios = appendNew(v.Scenarios, it.Entry.Scenario)
		v.Reasons = appendNew(v.Reasons, it.Why)
		v.Reasons = appendNew(v.Reasons, string(it.Entry.Reason))
		if v.Inbox != "" && it.Inbox != v.Inbox || v.Scenario != "" && it.Entry.Scenario != v.Scenario ||
			v.Reason != "" && it.Why != v.Reason && string(it.Entry.Reason) != v.Reason || minAge > 0 && now.Sub(it.Entry.Updated) < minAge {
			continue
		}
		v.Items = append(v.Items, it)
	}
	// A filter in force is shown chosen even when nothing waiting has its
	// value (a bookmarked inbox with an empty queue), so the page never
	// says "all" over a filtered list.
	v.Inboxes = appendNew(v.Inboxes, v.Inbox)
	v.Scenarios = appendNew(v.Scenarios, v.Scenario)
	v.Reasons = appendNew(v.Reasons, v.Reason)
	for _, l := range [][]string{v.Inboxes, v.Scenarios, v.Reasons} {
		slices.Sort(l)
	}
	if v.Sort == SortDue {
		byDeadline(v.Items)
	}
	s.render(w, r, http.StatusOK, "queue", v)
}

func appendNew(l []string, s string) []string {
	if s == "" || slices.Contains(l, s) {
		return l
	}
	return append(l, s)
}

// waiting collects the queue from the ledger, oldest first.
func (s *Server) waiting(ctx context.Context) ([]queueItem, error) {
	es, err := s.cfg.Ledger.Search(ctx, ledger.Query{
		States:    []ledger.State{ledger.StateDrafted, ledger.StateFailed, ledger.StateNeedsHuman, ledger.StateOverLimit, ledger.StateRetryRequested},
		Escalated: true, Limit: MaxQueue,
	})
	if err != nil {
		return nil, err
	}
	seen := map[triage.Key]bool{}
	var out []queueItem
	for _, e := range es {
		if seen[e.Key] {
			continue // a copy of a message already listed
		}
		seen[e.Key] = true
		it := queueItem{Ref: e.Key.Ref(), Entry: e, Inbox: e.Account + "/" + e.Mailbox}
		if e.Complaint.Open() {
			it.Due = e.Complaint
		}
		o := decodeOutcome(e.Outcome)
		if o != nil {
			it.Ticket, it.NoticeSuppressed = o.TicketID, o.NoticeSuppressed
		}
		switch e.State {
		case ledger.StateDrafted:
			rep, err := s.cfg.Ledger.Replies().GetReply(ctx, e.Key)
			if errors.Is(err, replies.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			switch {
			case draftWaiting(rep):
				it.Why = WhyDraft
			case rep.State == replies.DraftSending:
				it.Why = WhySending
			case rep.Outcome == replies.DraftRejected:
				it.Why = WhyRejected
			default:
				continue
			}
		case ledger.StateFailed:
			it.Why = WhyFailed
		case ledger.StateNeedsHuman:
			it.Why = WhyNeedsHuman
			if e.Reason == triage.ReasonEscalated {
				// watch moved the escalated email to Needs-Human: it waits
				// as an escalation, until a person deals with it.
				if handled, err := s.escalationHandled(ctx, e, it.Ticket); err != nil {
					return nil, err
				} else if handled {
					continue
				}
				it.Why = WhyEscalated
			}
		case ledger.StateOverLimit:
			it.Why = WhyOverLimit
		case ledger.StateRetryRequested:
			it.Why = WhyRetry
		default:
			if o == nil || !o.Escalated {
				continue
			}
			if handled, err := s.escalationHandled(ctx, e, it.Ticket); err != nil {
				return nil, err
			} else if handled {
				continue
			}
			it.Why = WhyEscalated
		}
		out = append(out, it)
	}
	if out, err = s.open(ctx, out); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b queueItem) int { return a.Entry.Updated.Compare(b.Entry.Updated) })
	return out, nil
}

// open drops from items those a person resolved or dismissed (and did not
// reopen), and those a person answered from the console.
func (s *Server) open(ctx context.Context, items []queueItem) ([]queueItem, error) {
	keys := make([]triage.Key, len(items))
	for i, it := range items {
		keys[i] = it.Entry.Key
	}
	closed, err := s.cfg.Ledger.Standing(ctx, keys)
	if err != nil {
		return nil, err
	}
	answered, err := s.cfg.Ledger.Replies().PersonAnswered(ctx, keys)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(items, func(it queueItem) bool { _, ok := closed[it.Entry.Key]; return ok || answered[it.Entry.Key] }), nil
}

// escalationHandled reports whether a person has dealt with an escalated
// email: its ticket was given back to triage, or carries a message sent
// after the escalation that is not triage's reply (a person answered).
func (s *Server) escalationHandled(ctx context.Context, e ledger.Stored, ticketID string) (bool, error) {
	if s.cfg.Tickets == nil || ticketID == "" {
		return false, nil
	}
	st, err := s.cfg.Tickets.Get(ctx, ticketID)
	if errors.Is(err, tickets.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !st.AgentDisabled {
		return true, nil
	}
	ours := ""
	if r, err := s.cfg.Ledger.Replies().GetReply(ctx, e.Key); err == nil {
		ours = r.MessageID
	} else if !errors.Is(err, replies.ErrNotFound) {
		return false, err
	}
	for _, m := range st.Messages {
		if m.Direction == tickets.Outbound && m.MessageID != ours && m.At.After(e.Updated) {
			return true, nil
		}
	}
	return false, nil
}
