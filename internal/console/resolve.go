package console

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"triage"
	"triage/internal/ledger"
	"triage/internal/replies"
)

// A person's decisions about an email, kept in the ledger's history
// (ledger.Resolve): resolve or dismiss it with a reason (it leaves the
// queue), reopen it (it waits again), or reject its draft with a reason
// (the draft leaves the Drafts folder at watch's next pass; the customer
// waits for a person until someone answers or resolves).

// WhyRejected: the draft was rejected; the customer still waits for a
// person's answer.
const WhyRejected = "rejected"

// reasonWords are the words the pages show for each reason.
var reasonWords = map[ledger.CloseReason]string{
	ledger.CloseAnsweredElsewhere: "answered elsewhere",
	ledger.CloseNoActionNeeded:    "no action needed",
	ledger.CloseSpam:              "spam",
	ledger.CloseDuplicate:         "duplicate",
	ledger.CloseUnsettled:         "settled by hand",
	ledger.CloseFoundInSent:       "found in the Sent folder",
	ledger.RejectWrongFacts:       "wrong facts",
	ledger.RejectWrongTone:        "wrong tone",
	ledger.RejectDoNotAnswer:      "must not be answered by triage",
	ledger.RejectPersonWrites:     "a person answers it",
}

// reasonChoice is one option of a reason select.
type reasonChoice struct {
	Value ledger.CloseReason
	Words string
}

func choices(rs []ledger.CloseReason) []reasonChoice {
	out := make([]reasonChoice, len(rs))
	for i, r := range rs {
		out[i] = reasonChoice{r, reasonWords[r]}
	}
	return out
}

// closeChoices and rejectChoices are the options the pages offer.
// (found_in_sent is the Sent folder check's alone).
var closeChoices, rejectChoices = choices(slices.DeleteFunc(slices.Clone(ledger.CloseReasons), func(r ledger.CloseReason) bool { return r == ledger.CloseFoundInSent })),
	choices(ledger.RejectReasons)

// resolution reads the reason and the note of a decision's form; ok is
// false (a page saying why was written) when the reason is not one of
// allowed or the note is too long.
func (s *Server) resolution(w http.ResponseWriter, r *http.Request, back string, allowed []ledger.CloseReason) (ledger.CloseReason, string, bool) {
	reason := ledger.CloseReason(r.PostFormValue("reason"))
	note := strings.TrimSpace(r.PostFormValue("note"))
	switch {
	case !slices.Contains(allowed, reason) || reason == ledger.CloseFoundInSent:
		s.message(w, r, http.StatusBadRequest, "Choose a reason", "Say why: choose one of the reasons offered.", back)
		return "", "", false
	case len(note) > ledger.MaxResolutionNote || !utf8.ValidString(note):
		s.message(w, r, http.StatusBadRequest, "Note too long", "The note may hold at most 2000 bytes of UTF-8 text.", back)
		return "", "", false
	}
	return reason, note, true
}

// reject records the draft of the email rejected, with the reason a
// person chose: nothing is sent, watch removes the draft from the Drafts
// folder at its next pass (woken now), and the email stays in the queue as
// waiting for a person.
func (s *Server) reject(w http.ResponseWriter, r *http.Request) {
	e, ref, ok := s.target(w, r)
	if !ok {
		return
	}
	back := "/conversation/" + ref
	reason, note, ok := s.resolution(w, r, back, ledger.RejectReasons)
	if !ok {
		return
	}
	if err := s.review.RejectDraft(r.Context(), e.Key); err != nil {
		if errors.Is(err, replies.ErrDraftTaken) {
			s.message(w, r, http.StatusConflict, "Already handled", "This draft is no longer waiting: someone sent or rejected it.", back)
			return
		}
		s.fail(w, r, err)
		return
	}
	if err := s.cfg.Ledger.Resolve(r.Context(), ledger.Resolution{Key: e.Key, Action: ledger.ActionRejected, Reason: reason, Person: userOf(r), Note: note}); err != nil {
		s.fail(w, r, err)
		return
	}
	s.wakeWatch(r.Context())
	s.log.Info("console: draft rejected", "user", userOf(r), "ref", ref, "reason", reason)
	s.done(w, r, ref, "rejected")
}

// closeEmail resolves or dismisses the email with the reason chosen: it
// leaves the queue until someone reopens it.
func (s *Server) closeEmail(action ledger.Action) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		e, ref, ok := s.target(w, r)
		if !ok {
			return
		}
		reason, note, ok := s.resolution(w, r, "/conversation/"+ref, ledger.CloseReasons)
		if !ok {
			return
		}
		if err := s.cfg.Ledger.Resolve(r.Context(), ledger.Resolution{Key: e.Key, Action: action, Reason: reason, Person: userOf(r), Note: note}); err != nil {
			s.fail(w, r, err)
			return
		}
		s.log.Info("console: email "+string(action), "user", userOf(r), "ref", ref, "reason", reason)
		s.done(w, r, ref, string(action))
	}
}

// reopen puts a resolved or dismissed email back in the queue.
func (s *Server) reopen(w http.ResponseWriter, r *http.Request) {
	e, ref, ok := s.target(w, r)
	if !ok {
		return
	}
	st, err := s.cfg.Ledger.Standing(r.Context(), []triage.Key{e.Key})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if _, closed := st[e.Key]; !closed {
		s.message(w, r, http.StatusConflict, "Not closed", "This email is not resolved or dismissed: there is nothing to reopen.", "/conversation/"+ref)
		return
	}
	if err := s.cfg.Ledger.Resolve(r.Context(), ledger.Resolution{Key: e.Key, Action: ledger.ActionReopened, Person: userOf(r)}); err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("console: email reopened", "user", userOf(r), "ref", ref)
	s.done(w, r, ref, "reopened")
}
