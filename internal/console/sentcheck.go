package console

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"triage/internal/ledger"
	"triage/internal/replies"
)

// Crash leftovers: a reply triage recorded but could not confirm it sent
// (reply_unconfirmed: watch stopped between recording it and hearing from
// the mail server, or the server's answer was lost) is looked up by its
// Message-ID in the Sent folder when the console opens it (and again on
// request). Found, it was sent: the reply is recorded sent and the email
// resolved, by the check. Not found, it stays for a person, who may
// dismiss it once settled by hand; it is never sent again.

// SentFinder looks Message-IDs up in the inbox's Sent folder (watch's
// InSent), counting the copies of each.
type SentFinder interface {
	InSent(ctx context.Context, messageIDs []string) (map[string]int, error)
}

// sentCheckTimeout bounds one look-up, the connection included.
const sentCheckTimeout = 20 * time.Second

// sentChecker is who a settlement by the Sent folder check is recorded as.
const sentChecker = "Sent folder check"

// sentCheckView is what a check found.
type sentCheckView struct {
	Ref       string
	MessageID string
	Copies    int    // copies in the Sent folder
	Err       string // why the check could not be made
	Settled   bool   // found: the reply was recorded sent
}

// unconfirmed reports whether ev's reply is one watch could not confirm.
func unconfirmed(ev emailView) bool {
	return ev.Reply != nil && ev.Reply.Kind == replies.KindReply && (ev.Reply.State == replies.ReplyNeedsHuman || ev.Reply.State == replies.ReplyPending)
}

// checkSent looks ev's unconfirmed reply up in the Sent folder and settles
// it when found; nil when there is nothing to check.
func (s *Server) checkSent(ctx context.Context, ev emailView) *sentCheckView {
	if !unconfirmed(ev) || ev.Closed != nil {
		return nil
	}
	v := &sentCheckView{Ref: ev.Ref, MessageID: ev.Reply.MessageID}
	if s.cfg.Sent == nil {
		v.Err = "the console has no IMAP settings to look in the Sent folder with (start it with the watch configuration)"
		return v
	}
	cctx, cancel := context.WithTimeout(ctx, sentCheckTimeout)
	defer cancel()
	found, err := s.cfg.Sent.InSent(cctx, []string{ev.Reply.MessageID})
	if err != nil {
		s.log.Warn("console: Sent folder check failed", "reply_message_id", ev.Reply.MessageID, "err", err)
		v.Err = err.Error()
		return v
	}
	v.Copies = found[ev.Reply.MessageID]
	if v.Copies == 0 {
		return v
	}
	lctx := context.WithoutCancel(ctx)
	if err := s.cfg.Ledger.Replies().MarkSent(lctx, ev.Entry.Key); err != nil {
		v.Err = err.Error()
		return v
	}
	note := "found in the Sent folder"
	if v.Copies > 1 {
		note = "found in the Sent folder " + strconv.Itoa(v.Copies) + " times"
	}
	if err := s.cfg.Ledger.Resolve(lctx, ledger.Resolution{Key: ev.Entry.Key, Action: ledger.ActionResolved, Reason: ledger.CloseFoundInSent,
		Person: sentChecker, Note: note + " (" + ev.Reply.MessageID + ")"}); err != nil {
		v.Err = err.Error()
		return v
	}
	s.log.Info("console: unconfirmed reply found in the Sent folder; settled as sent", "reply_message_id", ev.Reply.MessageID, "copies", v.Copies)
	v.Settled = true
	return v
}

// checkSentAction runs the check again on request.
func (s *Server) checkSentAction(w http.ResponseWriter, r *http.Request) {
	e, ref, ok := s.target(w, r)
	if !ok {
		return
	}
	ev, err := s.emailOf(r.Context(), e)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !unconfirmed(ev) {
		s.message(w, r, http.StatusConflict, "Nothing to check", "This email has no reply waiting to be confirmed.", "/conversation/"+ref)
		return
	}
	// The page checks as it opens.
	http.Redirect(w, r, "/conversation/"+ref+"#e-"+ref, http.StatusSeeOther)
}
