package console

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"triage"
	"triage/internal/clients/tickets"
	"triage/internal/dispatcher"
	"triage/internal/ledger"
	"triage/internal/processor"
	"triage/internal/replies"
)

// emailView is one inbound email of a conversation: what the customer
// wrote, what the agent did with it (the trajectory), and our reply or
// draft.
type emailView struct {
	Ref     string
	Entry   ledger.Stored
	Outcome *processor.Outcome // nil when the ledger kept none
	Calls   []callView
	Reply   *replyView
	// Closed is the resolution that took the email out of the queue
	// (resolved or dismissed), nil when none stands; History every
	// decision people made about it, oldest first.
	Closed  *ledger.Resolution
	History []ledger.Resolution
	// Composer answers the customer as a person (compose.go); nil when
	// triage answers the email.
	Composer *composerView
	// Label is where the email stands in plain words (page.go); Name the
	// customer's display name ("" unknown).
	Label label
	Name  string
	// SentCheck is what the Sent folder check found for a reply watch
	// could not confirm (sentcheck.go); nil when there was none.
	SentCheck *sentCheckView
}

// callView is one function call of a trajectory, its JSON indented.
type callView struct {
	dispatcher.Record
	ArgsJSON, ResultJSON    string
	ArgFields, ResultFields []field
}

// replyView is our reply or draft to an email.
type replyView struct {
	replies.Reply
	Text       parsedReply
	ParseError string
	// Waiting: a draft nobody has sent, edited or rejected yet.
	Waiting bool
}

type conversationView struct {
	Ref    string
	Ticket *tickets.State
	Emails []emailView
	// Others are outgoing messages of the ticket triage did not write (a
	// person's replies, seen in the Sent folder).
	Others  []tickets.Message
	CanSend bool
	Flash   string
	// Badge says where the conversation stands; Owner who owns the email
	// opened ("" nobody), People whom it can be assigned to;
	// CustomerName the customer's display name.
	Badge        label
	Owner        string
	People       []string
	CustomerName string
}

// conversation shows one email's conversation: every email of its ticket
// (or the email alone when it has none), oldest first.
func (s *Server) conversation(w http.ResponseWriter, r *http.Request) {
	cv, err := s.loadConversation(r.Context(), r.PathValue("ref"))
	if errors.Is(err, ledger.ErrNotFound) {
		s.message(w, r, http.StatusNotFound, "No such conversation", "The ledger has no email under this reference.", "/queue")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	cv.Flash = flashText(r.URL.Query().Get("done"))
	for _, n := range s.creds.names() {
		cv.People = appendNew(cv.People, n)
	}
	cv.People = appendNew(cv.People, userOf(r))
	cv.People = appendNew(cv.People, cv.Owner)
	slices.Sort(cv.People)
	s.render(w, r, http.StatusOK, "conversation", cv)
}

func (s *Server) loadConversation(ctx context.Context, ref string) (*conversationView, error) {
	entries, err := s.cfg.Ledger.ByRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	main := best(entries)
	cv := &conversationView{Ref: ref, CanSend: s.cfg.Sender != nil}
	if s.cfg.Tickets != nil {
		if cv.Ticket, err = s.ticketOf(ctx, main); err != nil {
			return nil, err
		}
	}
	all := []ledger.Stored{main}
	if cv.Ticket != nil {
		var ids []string
		for _, m := range cv.Ticket.Messages {
			if m.Direction == tickets.Inbound {
				ids = append(ids, m.MessageID)
			}
		}
		more, err := s.cfg.Ledger.ByMessageIDs(ctx, ids)
		if err != nil {
			return nil, err
		}
		// A Message-ID is the sender's word: another sender's email under
		// one of the ticket's IDs is not this customer's.
		for _, e := range more {
			if strings.EqualFold(e.Sender, cv.Ticket.CustomerEmail) {
				all = append(all, e)
			}
		}
	}
	byKey := map[triage.Key][]ledger.Stored{}
	var keys []triage.Key
	for _, e := range all {
		if _, ok := byKey[e.Key]; !ok {
			keys = append(keys, e.Key)
		}
		byKey[e.Key] = append(byKey[e.Key], e)
	}
	ours := map[string]bool{}
	for _, k := range keys {
		ev, err := s.emailOf(ctx, best(byKey[k]))
		if err != nil {
			return nil, err
		}
		if check := s.checkSent(ctx, ev); check != nil {
			if check.Settled { // read again: sent, and resolved
				if ev, err = s.emailOf(ctx, ev.Entry); err != nil {
					return nil, err
				}
			}
			ev.SentCheck = check
		}
		if ev.Reply != nil {
			ours[ev.Reply.MessageID] = true
		}
		cv.Emails = append(cv.Emails, ev)
	}
	slices.SortStableFunc(cv.Emails, func(a, b emailView) int { return a.Entry.Created.Compare(b.Entry.Created) })
	// The email opened comes first; the rest of the conversation follows,
	// oldest first.
	if i := slices.IndexFunc(cv.Emails, func(e emailView) bool { return e.Ref == ref }); i > 0 {
		opened := cv.Emails[i]
		cv.Emails = slices.Insert(slices.Delete(cv.Emails, i, i+1), 0, opened)
	}
	for i := range cv.Emails {
		if cv.Emails[i].Composer, err = s.composer(ctx, cv.Emails[i], cv.Ticket); err != nil {
			return nil, err
		}
		cv.Emails[i].Label = emailLabel(cv.Emails[i])
	}
	if cv.Ticket != nil {
		for _, m := range cv.Ticket.Messages {
			if m.Direction == tickets.Outbound && !ours[m.MessageID] {
				cv.Others = append(cv.Others, m)
			}
		}
	}
	ticketOwner := ""
	if cv.Ticket != nil && cv.Ticket.AgentDisabled {
		ticketOwner = cmp.Or(cv.Ticket.Owner, "a person")
	}
	if cv.Owner, err = s.ownerOf(ctx, main.Key, ticketOwner); err != nil {
		return nil, err
	}
	cv.Badge = conversationBadge(cv)
	for _, e := range cv.Emails {
		if cv.CustomerName == "" && (cv.Ticket == nil || strings.EqualFold(e.Entry.Sender, cv.Ticket.CustomerEmail)) {
			cv.CustomerName = e.Name
		}
	}
	return cv, nil
}

// best is the entry of a key to show: the one with an outcome, else the
// most recently updated (copies of a message share a key).
func best(es []ledger.Stored) ledger.Stored {
	return slices.MaxFunc(es, func(a, b ledger.Stored) int {
		if (a.Outcome != nil) != (b.Outcome != nil) {
			if a.Outcome != nil {
				return 1
			}
			return -1
		}
		return a.Updated.Compare(b.Updated)
	})
}

// ticketOf finds the ticket of an email: the one its outcome names, else
// the sender's ticket its Message-ID belongs to; nil when none.
func (s *Server) ticketOf(ctx context.Context, e ledger.Stored) (*tickets.State, error) {
	if o := decodeOutcome(e.Outcome); o != nil && o.TicketID != "" {
		st, err := s.cfg.Tickets.Get(ctx, o.TicketID)
		if err == nil || !errors.Is(err, tickets.ErrNotFound) {
			return st, err
		}
	}
	if e.MessageID == "" {
		return nil, nil
	}
	st, err := s.cfg.Tickets.Find(ctx, e.Sender, []string{e.MessageID})
	if errors.Is(err, tickets.ErrNotFound) {
		return nil, nil
	}
	return st, err
}

func decodeOutcome(js []byte) *processor.Outcome {
	if len(js) == 0 {
		return nil
	}
	var o processor.Outcome
	if json.Unmarshal(js, &o) != nil {
		return nil
	}
	return &o
}

func (s *Server) emailOf(ctx context.Context, e ledger.Stored) (emailView, error) {
	ev := emailView{Ref: e.Key.Ref(), Entry: e, Outcome: decodeOutcome(e.Outcome)}
	if ev.Outcome != nil {
		for _, c := range ev.Outcome.FunctionCalls {
			ev.Calls = append(ev.Calls, callView{Record: c, ArgsJSON: indent(c.Args), ResultJSON: indent(c.Result), ArgFields: fieldsOf(c.Args), ResultFields: fieldsOf(c.Result)})
		}
		ev.Name = ev.Outcome.FromName
	}
	if err := s.decisions(ctx, &ev); err != nil {
		return ev, err
	}
	rep, err := s.cfg.Ledger.Replies().GetReply(ctx, e.Key)
	if errors.Is(err, replies.ErrNotFound) {
		return ev, nil
	}
	if err != nil {
		return ev, err
	}
	rv := &replyView{Reply: rep, Waiting: draftWaiting(rep)}
	if rv.Text, err = parseReply(rep.Raw); err != nil {
		rv.ParseError = err.Error()
	}
	ev.Reply = rv
	if ev.Name == "" {
		ev.Name = rv.Text.ToName // the name triage addressed its reply to
	}
	return ev, nil
}

// decisions puts on ev the decisions people made about its email.
func (s *Server) decisions(ctx context.Context, ev *emailView) error {
	hist, err := s.cfg.Ledger.Resolutions(ctx, ev.Entry.Key)
	if err != nil {
		return err
	}
	ev.History = hist
	st, err := s.cfg.Ledger.Standing(ctx, []triage.Key{ev.Entry.Key})
	if r, ok := st[ev.Entry.Key]; ok {
		ev.Closed = &r
	}
	return err
}

// draftWaiting reports whether r is a draft waiting for a person.
func draftWaiting(r replies.Reply) bool {
	return r.Kind == replies.KindDraft && r.Outcome == "" && (r.State == replies.DraftPending || r.State == replies.DraftStored)
}

func indent(v map[string]any) string {
	if len(v) == 0 {
		return ""
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the template escapes; keep <, > and & readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return "(not JSON)"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// flashText is the line shown after an action (?done=...); only these
// fixed words are ever put in the URL.
func flashText(done string) string {
	return cmp.Or(map[string]string{
		"sent":      "The reply was sent.",
		"sent-next": "The reply was sent. This is the next email waiting.",
		"rejected":  "The draft was rejected: nothing was sent. triage watch removes it from the Drafts folder; the email waits for a person until someone answers or resolves it.",
		"resolved":  "The email was resolved: it left the queue.",
		"dismissed": "The email was dismissed: it left the queue.",
		"reopened":  "The email was reopened: it waits in the queue again.",
		"replied":   "Your reply was sent to the customer; triage watch files it in the Sent folder.",
		"saved":     "Your reply was saved as a draft: reopen this page to finish it.",
		"takeover":  "You took the conversation over: triage will not answer it.",
		"assigned":  "The owner of the email was changed.",
		"release":   "The conversation is back with triage.",
		"note":      "The note was added to the ticket.",
		"retry":     "Retry requested: triage watch, woken now, moves the email back to the inbox and handles it again.",
	}[done], "")
}
