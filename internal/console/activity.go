package console

import (
	"net/http"
	"slices"

	"triage/internal/ledger"
)

// MaxActivity bounds the rows the activity page shows.
const MaxActivity = 200

type activityView struct {
	// People is what people did in the console, newest first, of Person
	// ("" everyone); Persons the people to choose from.
	People   []peopleRow
	Person   string
	Persons  []string
	Q, State string
	States   []ledger.State
	Rows     []activityRow
	Limit    int
}

type activityRow struct {
	Ref string
	ledger.Stored
}

// activityStates are the states the activity page filters by.
var activityStates = ledger.States

// activity is the ledger, newest first, searchable by sender, subject,
// Message-ID, scenario, reason or state, and filterable by state. The
// search is a POST form: what a person searches for is often a customer's
// address, which must not end up in URLs (history, proxy logs).
func (s *Server) activity(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	v := activityView{Q: r.PostFormValue("q"), State: r.PostFormValue("state"), States: activityStates, Limit: MaxActivity}
	if len(v.Q) > 200 {
		v.Q = v.Q[:200]
	}
	lq := ledger.Query{Text: v.Q, Limit: MaxActivity}
	if st := ledger.State(v.State); slices.Contains(activityStates, st) {
		lq.States = []ledger.State{st}
	} else {
		v.State = ""
	}
	es, err := s.cfg.Ledger.Search(r.Context(), lq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for _, e := range es {
		v.Rows = append(v.Rows, activityRow{Ref: e.Key.Ref(), Stored: e})
	}
	v.Person = clipName(r.PostFormValue("person"))
	if v.People, err = s.peopleLog(r.Context(), v.Person); err != nil {
		s.fail(w, r, err)
		return
	}
	all, err := s.peopleLog(r.Context(), "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for _, p := range all {
		v.Persons = appendNew(v.Persons, p.Person)
	}
	for _, n := range s.creds.names() {
		v.Persons = appendNew(v.Persons, n)
	}
	v.Persons = appendNew(v.Persons, v.Person)
	slices.Sort(v.Persons)
	s.render(w, r, http.StatusOK, "activity", v)
}
