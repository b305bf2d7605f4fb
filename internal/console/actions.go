package console

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/replies"
)

// MaxNoteBytes bounds a note typed in the console.
const MaxNoteBytes = 16 << 10

// Every action is a POST of a form (htmx sends the same form), answered
// with a redirect to the conversation (?done= says what happened, in fixed
// words) or a page saying why it could not be done.

// target is the email an action is about: the newest entry of its ref.
func (s *Server) target(w http.ResponseWriter, r *http.Request) (ledger.Stored, string, bool) {
	ref := r.PathValue("ref")
	es, err := s.cfg.Ledger.ByRef(r.Context(), ref)
	if errors.Is(err, ledger.ErrNotFound) {
		s.message(w, r, http.StatusNotFound, "No such conversation", "The ledger has no email under this reference.", "/queue")
		return ledger.Stored{}, "", false
	}
	if err != nil {
		s.fail(w, r, err)
		return ledger.Stored{}, "", false
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxEditBytes*4+MaxNoteBytes)
	if err := r.ParseForm(); err != nil {
		s.message(w, r, http.StatusBadRequest, "Bad form", "The form could not be read: "+err.Error(), "/conversation/"+ref)
		return ledger.Stored{}, "", false
	}
	return best(es), ref, true
}

func (s *Server) done(w http.ResponseWriter, r *http.Request, ref, what string) {
	http.Redirect(w, r, "/conversation/"+ref+"?done="+what+"#top", http.StatusSeeOther)
}

func (s *Server) approve(w http.ResponseWriter, r *http.Request) { s.send(w, r, false) }

func (s *Server) sendEdited(w http.ResponseWriter, r *http.Request) { s.send(w, r, true) }

func (s *Server) send(w http.ResponseWriter, r *http.Request, edited bool) {
	e, ref, ok := s.target(w, r)
	if !ok {
		return
	}
	back := "/conversation/" + ref
	body := ""
	if edited {
		body = r.PostFormValue("body")
		switch {
		case strings.TrimSpace(body) == "":
			s.message(w, r, http.StatusBadRequest, "Nothing to send", "The edited reply is empty.", back)
			return
		case len(body) > MaxEditBytes || !utf8.ValidString(body):
			s.message(w, r, http.StatusBadRequest, "Reply too long", "An edited reply may hold at most 20000 bytes of UTF-8 text.", back)
			return
		}
	}
	ticketID := ""
	if o := decodeOutcome(e.Outcome); o != nil {
		ticketID = o.TicketID
	}
	outcome, err := s.sendDraft(r.Context(), e.Key, body, userOf(r), ticketID)
	if err != nil {
		switch {
		case errors.Is(err, replies.ErrDraftTaken):
			s.message(w, r, http.StatusConflict, "Already handled", "This draft is no longer waiting: someone sent or rejected it, or it is being sent.", back)
		case errors.Is(err, replies.ErrNotFound):
			s.message(w, r, http.StatusNotFound, "No draft", "This email has no draft to send.", back)
		case errors.Is(err, errNoSender):
			s.message(w, r, http.StatusConflict, "Sending is not configured", "The console has no SMTP server or outbox to send with.", back)
		default:
			s.log.Error("console: send failed", "ref", ref, "stage", sendStage(err))
			s.message(w, r, http.StatusBadGateway, "Not sent", err.Error(), back)
		}
		return
	}
	action := ledger.ActionApproved
	if outcome == replies.DraftEdited {
		action = ledger.ActionEdited
	}
	s.record(r, e.Key, action, "")
	if r.PostFormValue("next") == "1" {
		s.toNext(w, r, e.Key, "sent-next")
		return
	}
	s.done(w, r, ref, "sent")
}

// ticketFor is the ticket an action on e works on, or a page saying there
// is none.
func (s *Server) ticketFor(w http.ResponseWriter, r *http.Request, e ledger.Stored, ref string) (*tickets.State, bool) {
	if s.cfg.Tickets == nil {
		s.message(w, r, http.StatusConflict, "No ticket store", "The console has no ticket store configured.", "/conversation/"+ref)
		return nil, false
	}
	st, err := s.ticketOf(r.Context(), e)
	if err != nil {
		s.fail(w, r, err)
		return nil, false
	}
	if st == nil {
		s.message(w, r, http.StatusConflict, "No ticket", "This email has no ticket: there is no conversation to take over or annotate.", "/conversation/"+ref)
		return nil, false
	}
	return st, true
}

// takeover hands the conversation to the person signed in, as `triage
// tickets takeover` does: triage no longer answers it.
func (s *Server) takeover(w http.ResponseWriter, r *http.Request) {
	e, ref, ok := s.target(w, r)
	if !ok {
		return
	}
	st, ok := s.ticketFor(w, r, e, ref)
	if !ok {
		return
	}
	if err := s.cfg.Tickets.Takeover(r.Context(), st.TicketID, userOf(r)); err != nil {
		s.fail(w, r, err)
		return
	}
	s.record(r, e.Key, ledger.ActionTookOver, "")
	s.log.Info("console: conversation taken over", "ticket", st.TicketID, "user", userOf(r))
	s.done(w, r, ref, "takeover")
}

// release gives the conversation back to triage (`triage tickets release`).
func (s *Server) release(w http.ResponseWriter, r *http.Request) {
	e, ref, ok := s.target(w, r)
	if !ok {
		return
	}
	st, ok := s.ticketFor(w, r, e, ref)
	if !ok {
		return
	}
	if err := s.cfg.Tickets.Release(r.Context(), st.TicketID); err != nil {
		s.fail(w, r, err)
		return
	}
	s.record(r, e.Key, ledger.ActionReleased, "")
	s.log.Info("console: conversation released", "ticket", st.TicketID, "user", userOf(r))
	s.done(w, r, ref, "release")
}

// note appends a person's note to the ticket (tickets.Conversations.AddNote,
// keyed by a fresh Message-ID so a resubmitted form adds it once per ID).
func (s *Server) note(w http.ResponseWriter, r *http.Request) {
	e, ref, ok := s.target(w, r)
	if !ok {
		return
	}
	text := strings.TrimSpace(r.PostFormValue("text"))
	back := "/conversation/" + ref
	switch {
	case text == "":
		s.message(w, r, http.StatusBadRequest, "Empty note", "Write something to add a note.", back)
		return
	case len(text) > MaxNoteBytes || !utf8.ValidString(text):
		s.message(w, r, http.StatusBadRequest, "Note too long", "A note may hold at most 16 KiB of UTF-8 text.", back)
		return
	}
	st, ok := s.ticketFor(w, r, e, ref)
	if !ok {
		return
	}
	var b [12]byte
	rand.Read(b[:])
	id := "<console-note-" + hex.EncodeToString(b[:]) + "@triage.console>"
	if _, err := s.cfg.Tickets.AddNote(r.Context(), st.TicketID, tickets.Note{MessageID: id, From: userOf(r) + " (console)", Subject: "note", Text: text, At: s.cfg.Now()}); err != nil {
		s.fail(w, r, err)
		return
	}
	s.record(r, e.Key, ledger.ActionNoted, "")
	s.log.Info("console: note added", "ticket", st.TicketID, "user", userOf(r))
	s.done(w, r, ref, "note")
}

// retry asks triage watch to handle a failed email again
// (ledger.RequestRetry): at its next pass watch moves it from the failed
// folder back to the inbox, and the pipeline runs on it afresh. The
// daemon is woken for it at once.
func (s *Server) retry(w http.ResponseWriter, r *http.Request) {
	e, ref, ok := s.target(w, r)
	if !ok {
		return
	}
	if err := s.cfg.Ledger.RequestRetry(r.Context(), e.Key); err != nil {
		if errors.Is(err, ledger.ErrNotRetryable) {
			s.message(w, r, http.StatusConflict, "Cannot retry", "Only a failed email with no reply or draft, already moved to the failed folder, can be retried, and not one whose failure would come again (no usable sender, unreadable, too large, a reused Message-ID, an auto-responder loop).", "/conversation/"+ref)
			return
		}
		s.fail(w, r, err)
		return
	}
	s.wakeWatch(r.Context())
	s.record(r, e.Key, ledger.ActionRetried, "")
	s.log.Info("console: retry requested", "user", userOf(r), "ref", ref)
	s.done(w, r, ref, "retry")
}
