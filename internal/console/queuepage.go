package console

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"triage"
	"triage/internal/clients/tickets"
)

// The queue page: everything waiting for a person, searched, filtered,
// sorted and cut into pages. Filters are kept in the URL (a bookmark
// reopens them); the search is sent in the request body, never the URL
// (what a person searches for is often a customer's address or name).

// PageSize is how many emails one page of the queue lists.
const PageSize = 50

// maxSearch bounds the search text.
const maxSearch = 200

// Orders of the queue (sort=).
const (
	SortWaiting  = ""         // waiting longest first
	SortDue      = "due"      // the soonest complaint deadline first
	SortPriority = "priority" // the ticket's priority, highest first
)

// Owner filters (owner=) besides a person's name.
const (
	OwnerMine       = "mine"
	OwnerUnassigned = "unassigned"
)

type queueView struct {
	Items                        []queueItem
	Inboxes, Scenarios, Reasons  []string
	Inbox, Scenario, Reason, Age string
	Ages                         []string
	Sort                         string
	// Q is the search; Owner the owner filter, Owners the people to
	// choose from.
	Q, Owner string
	Owners   []string
	// Total is everything waiting, Matched what the filters and the search
	// let through; the page lists Matched's From..To (1-based).
	Total, Matched  int
	Page, Pages     int
	From, To        int
	PrevPage, Next  int // 0: none
	Counts          []reasonCount
	Capped          []string
	Flash           string
	MaxQueue        int
	FilterQuery     string // the filters as a URL query, for the links
	OrderingChoices []choice
}

// reasonCount is how many emails wait for one reason (under the other
// filters and the search).
type reasonCount struct {
	Why string
	N   int
}

type choice struct{ Value, Words string }

var sortChoices = []choice{{SortWaiting, "waiting longest"}, {SortDue, "complaint deadline"}, {SortPriority, "priority"}}

// priorityRank orders ticket priorities, highest first; unknown last.
func priorityRank(p string) int {
	switch strings.ToLower(p) {
	case "urgent":
		return 0
	case "high":
		return 1
	case "normal":
		return 2
	case "low":
		return 3
	}
	return 4
}

// matches reports whether the item's subject, customer (address or name),
// serials or ticket contain q (case-insensitive).
func (it queueItem) matches(q string) bool {
	if q == "" {
		return true
	}
	q = strings.ToLower(q)
	hay := []string{it.Entry.Subject, it.Entry.Sender, it.Name, it.Ticket}
	hay = append(hay, it.Serials...)
	for _, h := range hay {
		if strings.Contains(strings.ToLower(h), q) {
			return true
		}
	}
	return false
}

// queue lists everything waiting for a person (GET: filters from the URL;
// POST: from the form, with the search). An htmx request gets the filters'
// URL pushed (HX-Push-Url), without the search.
func (s *Server) queue(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	items, capped, err := s.waiting(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f := r.Form
	v := queueView{Inbox: f.Get("inbox"), Scenario: f.Get("scenario"), Reason: f.Get("reason"), Age: f.Get("age"), Owner: f.Get("owner"),
		Ages: []string{"1h", "24h", "7d"}, Total: len(items), Capped: capped, MaxQueue: s.maxQueue, OrderingChoices: sortChoices}
	if why, ok := f["why"]; ok && len(why) > 0 {
		v.Reason = why[0] // a count's button chooses its reason
	}
	if r.Method == http.MethodPost {
		v.Q = strings.TrimSpace(clipName(f.Get("q")))
		if len(v.Q) > maxSearch {
			v.Q = v.Q[:maxSearch]
		}
	}
	if v.Sort = f.Get("sort"); !slices.ContainsFunc(sortChoices, func(c choice) bool { return c.Value == v.Sort }) {
		v.Sort = SortWaiting
	}
	minAge, ok := ageFilters[v.Age]
	if !ok {
		v.Age = "" // not a choice (a hand-edited link): any age, as the page shows
	}
	user := userOf(r)
	owner := v.Owner
	if owner == OwnerMine {
		owner = user
	}
	now := s.cfg.Now()
	counts := map[string]int{}
	var matched []queueItem
	for _, it := range items {
		v.Inboxes = appendNew(v.Inboxes, it.Inbox)
		v.Scenarios = appendNew(v.Scenarios, it.Entry.Scenario)
		v.Reasons = appendNew(v.Reasons, it.Why)
		v.Reasons = appendNew(v.Reasons, string(it.Entry.Reason))
		v.Owners = appendNew(v.Owners, it.Owner)
		if v.Inbox != "" && it.Inbox != v.Inbox || v.Scenario != "" && it.Entry.Scenario != v.Scenario ||
			minAge > 0 && now.Sub(it.Entry.Updated) < minAge || !it.matches(v.Q) ||
			v.Owner == OwnerUnassigned && it.Owner != "" || owner != "" && v.Owner != OwnerUnassigned && !strings.EqualFold(it.Owner, owner) {
			continue
		}
		counts[it.Why]++
		if v.Reason != "" && it.Why != v.Reason && string(it.Entry.Reason) != v.Reason {
			continue
		}
		matched = append(matched, it)
	}
	for why, n := range counts {
		v.Counts = append(v.Counts, reasonCount{why, n})
	}
	slices.SortFunc(v.Counts, func(a, b reasonCount) int { return cmp.Or(b.N-a.N, strings.Compare(a.Why, b.Why)) })
	// A filter in force is shown chosen even when nothing waiting has its
	// value (a bookmarked inbox with an empty queue), so the page never
	// says "all" over a filtered list.
	v.Inboxes = appendNew(v.Inboxes, v.Inbox)
	v.Scenarios = appendNew(v.Scenarios, v.Scenario)
	v.Reasons = appendNew(v.Reasons, v.Reason)
	for _, n := range s.creds.names() {
		v.Owners = appendNew(v.Owners, n)
	}
	v.Owners = appendNew(v.Owners, user)
	if v.Owner != OwnerMine && v.Owner != OwnerUnassigned {
		v.Owners = appendNew(v.Owners, v.Owner)
	}
	for _, l := range [][]string{v.Inboxes, v.Scenarios, v.Reasons, v.Owners} {
		slices.Sort(l)
	}
	switch v.Sort {
	case SortDue:
		byDeadline(matched)
	case SortPriority:
		slices.SortStableFunc(matched, func(a, b queueItem) int { return priorityRank(a.Priority) - priorityRank(b.Priority) })
	}
	v.Matched = len(matched)
	v.Pages = max(1, (v.Matched+PageSize-1)/PageSize)
	v.Page, _ = strconv.Atoi(f.Get("page"))
	v.Page = min(max(v.Page, 1), v.Pages)
	lo, hi := (v.Page-1)*PageSize, min(v.Page*PageSize, v.Matched)
	v.Items = matched[lo:hi]
	v.From, v.To = lo+1, hi
	if v.Page > 1 {
		v.PrevPage = v.Page - 1
	}
	if v.Page < v.Pages {
		v.Next = v.Page + 1
	}
	v.FilterQuery = v.filterQuery()
	v.Flash = flashText(r.URL.Query().Get("done"))
	if r.Header.Get("HX-Request") == "true" {
		q := v.FilterQuery
		if v.Page > 1 {
			q += "&page=" + strconv.Itoa(v.Page)
		}
		w.Header().Set("HX-Push-Url", "/queue?"+q)
	}
	s.render(w, r, http.StatusOK, "queue", v)
}

// filterQuery is the URL query of the filters in force (never the search).
func (v *queueView) filterQuery() string {
	var b strings.Builder
	for i, kv := range [][2]string{{"inbox", v.Inbox}, {"scenario", v.Scenario}, {"reason", v.Reason}, {"age", v.Age}, {"sort", v.Sort}, {"owner", v.Owner}} {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(kv[0] + "=" + url.QueryEscape(kv[1]))
	}
	return b.String()
}

// owners fills in each item's owner (its latest assignment, else the
// person who took its ticket over) and its ticket's priority.
func (s *Server) owners(ctx context.Context, items []queueItem) error {
	keys := make([]triage.Key, len(items))
	for i, it := range items {
		keys[i] = it.Entry.Key
	}
	assigned, err := s.cfg.Ledger.Owners(ctx, keys)
	if err != nil {
		return err
	}
	ts := map[string]*tickets.State{}
	for i := range items {
		it := &items[i]
		it.Owner = assigned[it.Entry.Key]
		if s.cfg.Tickets == nil || it.Ticket == "" {
			continue
		}
		st, ok := ts[it.Ticket]
		if !ok {
			st, err = s.cfg.Tickets.Get(ctx, it.Ticket)
			if err != nil && !errors.Is(err, tickets.ErrNotFound) {
				return err
			}
			ts[it.Ticket] = st
		}
		if st == nil {
			continue
		}
		it.Priority = st.Priority
		if it.Owner == "" && st.AgentDisabled {
			it.Owner = st.Owner
		}
	}
	return nil
}

// whyWords are the plain words of each reason an email waits for.
var whyWords = map[string]string{
	WhyDraft:      "draft waiting",
	WhyNeedsHuman: "needs a person",
	WhyFailed:     "failed",
	WhyOverLimit:  "over a reply limit",
	WhyEscalated:  "escalated",
	WhySending:    "sent, not confirmed",
	WhyRetry:      "retry asked",
	WhyRejected:   "draft rejected",
}

// byDeadline orders items as SortDue does: the complaints whose deadline
// is soonest (overdue first), then the rest (a stable sort keeps them
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

func appendNew(l []string, s string) []string {
	if s == "" || slices.Contains(l, s) {
		return l
	}
	return append(l, s)
}
