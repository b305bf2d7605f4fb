package console

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"triage"
	"triage/internal/ledger"
)

// People in the console: who owns a conversation (assign to me, to a
// colleague, to nobody), and what each person did, recorded in the
// ledger's history of people's actions (ledger.PeopleLog) with their name.

// record keeps in the history that the person signed in did action on
// key; an action already done is not undone when recording fails (it is
// logged).
func (s *Server) record(r *http.Request, key triage.Key, action ledger.Action, note string) {
	err := s.cfg.Ledger.Resolve(context.WithoutCancel(r.Context()), ledger.Resolution{Key: key, Action: action, Person: userOf(r), Note: note})
	if err != nil {
		s.log.Warn("console: could not record a person's action", "action", action, "err", err)
	}
}

// assignTo is whom an assignment form names: "me" the person signed in,
// "" nobody, else one of the people the console knows (the users file,
// or anyone when there is none). ok is false for a name it does not know.
func (s *Server) assignTo(r *http.Request, to string) (string, bool) {
	to = clipName(to)
	switch {
	case to == "":
		return "", true
	case to == "me":
		return userOf(r), true
	}
	names := s.creds.names()
	if len(names) == 0 || slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, to) }) {
		return to, true
	}
	return "", false
}

// assign gives the email to a person (or to nobody): its owner, shown in
// the queue (the "mine" filter) and on its page.
func (s *Server) assign(w http.ResponseWriter, r *http.Request) {
	e, ref, ok := s.target(w, r)
	if !ok {
		return
	}
	var to string
	to = r.PostFormValue("to")
	if r.PostFormValue("me") != "" {
		to = "me"
	}
	to, ok = s.assignTo(r, to)
	if !ok {
		s.message(w, r, http.StatusBadRequest, "Nobody by that name", "Assign to one of the people of the console's users file.", "/conversation/"+ref)
		return
	}
	err := s.cfg.Ledger.Resolve(r.Context(), ledger.Resolution{Key: e.Key, Action: ledger.ActionAssigned, Person: userOf(r), Assignee: to})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("console: email assigned", "user", userOf(r), "ref", ref, "to", to)
	s.done(w, r, ref, "assigned")
}

// ownerOf is who owns the email: its latest assignment, else the person
// who took its ticket over ("" nobody).
func (s *Server) ownerOf(ctx context.Context, key triage.Key, ticketOwner string) (string, error) {
	o, err := s.cfg.Ledger.Owners(ctx, []triage.Key{key})
	if err != nil {
		return "", err
	}
	if owner, ok := o[key]; ok {
		return owner, nil
	}
	return ticketOwner, nil
}

// toNext sends the browser to the email waiting after key in the queue
// (waiting longest first; the first when key is the last), with done's
// line, or to the queue when nothing else waits.
func (s *Server) toNext(w http.ResponseWriter, r *http.Request, key triage.Key, done string) {
	items, _, err := s.waiting(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	items = slices.DeleteFunc(items, func(it queueItem) bool { return it.Entry.Key == key })
	if len(items) == 0 {
		http.Redirect(w, r, "/queue?done="+done, http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/conversation/"+items[0].Ref+"?done="+done+"#top", http.StatusSeeOther)
}

// peopleRow is one line of what people did.
type peopleRow struct {
	Ref string
	ledger.Resolution
}

// actionWords are the words of the activity log for each action.
var actionWords = map[ledger.Action]string{
	ledger.ActionResolved:  "resolved",
	ledger.ActionDismissed: "dismissed",
	ledger.ActionReopened:  "reopened",
	ledger.ActionRejected:  "rejected the draft",
	ledger.ActionAssigned:  "assigned",
	ledger.ActionApproved:  "approved the draft",
	ledger.ActionEdited:    "sent the draft edited",
	ledger.ActionTookOver:  "took over",
	ledger.ActionReleased:  "gave back to triage",
	ledger.ActionNoted:     "added a note",
	ledger.ActionRetried:   "asked for a retry",
	ledger.ActionReplied:   "replied to the customer",
}

// peopleLog is what people did, newest first (person "" everyone).
func (s *Server) peopleLog(ctx context.Context, person string) ([]peopleRow, error) {
	rs, err := s.cfg.Ledger.PeopleLog(ctx, person, MaxActivity)
	if err != nil {
		return nil, err
	}
	out := make([]peopleRow, len(rs))
	for i, r := range rs {
		out[i] = peopleRow{Ref: r.Key.Ref(), Resolution: r}
	}
	return out, nil
}
