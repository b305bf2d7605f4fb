package console

import (
	"net/http"
	"slices"

	"triage/internal/ledger"
)

// MaxActivity bounds the rows the activity page shows.
const MaxActivity = 200

type activityView struct {
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
	s.render(w, r, http.StatusOK, "activity", v)
}
