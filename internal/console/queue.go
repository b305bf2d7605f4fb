package console

import (
	"cmp"
	"context"
	"errors"
	"slices"

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

// MaxQueue bounds the entries of one kind (a ledger state, or the
// escalations) the queue looks at; a kind with more says so on the page,
// so nothing waits unseen. Every kind is read apart: a flood of one
// (cheap mails over a limit) never pushes another out.
const MaxQueue = 5000

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
	// Name is the customer's display name ("" unknown), Serials the
	// serial numbers the email gave, Priority its ticket's, Owner the
	// person it is assigned to (or who took its ticket over).
	Name     string
	Serials  []string
	Priority string
	Owner    string
}

// waitingStates are the ledger states the queue reads, each apart.
var waitingStates = []ledger.State{ledger.StateDrafted, ledger.StateFailed, ledger.StateNeedsHuman, ledger.StateOverLimit, ledger.StateRetryRequested}

// waiting collects the queue from the ledger, oldest first; capped names
// the kinds that held more than MaxQueue entries (their newest shown).
func (s *Server) waiting(ctx context.Context) (out []queueItem, capped []string, err error) {
	seen := map[triage.Key]bool{}
	for _, st := range append(waitingStates, "") {
		q := ledger.Query{States: []ledger.State{st}, Limit: s.maxQueue + 1}
		if st == "" {
			q = ledger.Query{Escalated: true, Limit: s.maxQueue + 1}
		}
		es, err := s.cfg.Ledger.Search(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		if len(es) > s.maxQueue {
			capped = append(capped, cmp.Or(string(st), WhyEscalated))
			es = es[:s.maxQueue]
		}
		if out, err = s.collect(ctx, es, seen, out); err != nil {
			return nil, nil, err
		}
	}
	if out, err = s.open(ctx, out); err != nil {
		return nil, nil, err
	}
	if err := s.owners(ctx, out); err != nil {
		return nil, nil, err
	}
	slices.SortStableFunc(out, func(a, b queueItem) int { return a.Entry.Updated.Compare(b.Entry.Updated) })
	return out, capped, nil
}

// collect adds to out the entries of es that wait for a person (a copy of
// a message already seen is skipped); it keeps of each what the queue
// shows, not its outcome and text.
func (s *Server) collect(ctx context.Context, es []ledger.Stored, seen map[triage.Key]bool, out []queueItem) ([]queueItem, error) {
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
			it.Name, it.Serials = o.FromName, o.SerialNumbers
		}
		it.Entry.Outcome, it.Entry.Body = nil, ""
		switch e.State {
		case ledger.StateDrafted:
			rep, err := s.cfg.Ledger.Replies().GetReply(ctx, e.Key)
			if errors.Is(err, replies.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if it.Name == "" {
				// An outcome without the sender's name: the name the
				// draft is addressed to.
				if p, err := parseReply(rep.Raw); err == nil {
					it.Name = p.ToName
				}
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
