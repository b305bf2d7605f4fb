package watch

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"triage/internal/message"
	"triage/internal/replies"
	"triage/internal/review"
	"triage/internal/trace"
)

// Draft tracking defaults.
const (
	// DefaultDraftWindow: a draft with no reply from a person for this long
	// counts as discarded.
	DefaultDraftWindow = 7 * 24 * time.Hour
	// maxSentScan bounds the Sent folder messages looked at in one pass; the
	// rest wait for the next pass.
	maxSentScan = 500
	// draftStatsEvery is how often the draft figures go to the metrics:
	// they count every draft in the ledger, too much for every pass.
	draftStatsEvery = time.Minute
	// maxPersonReplyBytes bounds the person's reply fetched to compare it
	// with a draft; a larger one counts as edited.
	maxPersonReplyBytes = 2 << 20
)

// PersonReply is a reply a person wrote in a thread triage handled: a
// message in the Sent folder, not written by triage, whose In-Reply-To or
// References name a message of the thread (an inbound message in the
// ledger, or one of our replies or drafts).
type PersonReply struct {
	MessageID  string // the person's reply ("" when it has none)
	InReplyTo  string
	References []string
	From       string // the From address: often the shared mailbox's
	FromName   string // the From display name
	// Sender is the Sender header (the person who sent for the From
	// mailbox, when their client says so); zero when none.
	Sender mail.Address
	Date   time.Time

	Thread review.Thread // the handled inbound message, and the Message-ID that matched

	// DraftOutcome is replies.DraftSentAsIs or DraftEdited when this reply
	// resolved the thread's draft ("" otherwise), with its Similarity.
	DraftOutcome string
	Similarity   float64
}

// trackDrafts runs before every pass: the Sent folder scan (when there
// is a Sent folder), then drafts older than DraftWindow without a
// person's reply become discarded, then the draft figures go to the
// metrics (on the first pass, then at most every draftStatsEvery).
func (w *Watcher) trackDrafts(ctx context.Context, c *imapclient.Client) error {
	// Without the Sent folder nobody's replies can be seen: drafts stay
	// pending rather than counting as discarded.
	if w.sent != "" {
		if err := w.scanSent(ctx, c); err != nil {
			return err
		}
		n, err := w.review.DiscardStaleDrafts(ctx, w.cfg.Account, w.cfg.Mailbox, w.cfg.Now().Add(-w.cfg.DraftWindow))
		if err != nil {
			return w.ledgerErr(err)
		}
		if n > 0 {
			w.log.Info("drafts discarded: no reply from a person", "drafts", n, "window", w.cfg.DraftWindow.String())
		}
	}
	if now := w.cfg.Now(); w.cfg.Metrics != nil && (w.draftStatsAt.IsZero() || now.Sub(w.draftStatsAt) >= draftStatsEvery) {
		w.draftStatsAt = now
		stats, err := w.review.DraftStats(ctx)
		if err != nil {
			return w.ledgerErr(err)
		}
		// This inbox's drafts (and those recovered after a crash, which
		// name none), per scenario.
		counts := map[string]review.DraftStat{}
		for _, s := range stats {
			if s.Account != "" && (s.Account != w.cfg.Account || s.Mailbox != w.cfg.Mailbox) {
				continue
			}
			c := counts[s.Scenario]
			c.Add(s)
			counts[s.Scenario] = c
		}
		for scenario, c := range counts {
			w.cfg.Metrics.Drafts(scenario, trace.DraftCounts{Drafted: c.Drafted, SentAsIs: c.SentAsIs, Edited: c.Edited,
				Rejected: c.Rejected, Discarded: c.Discarded, Pending: c.Pending})
		}
	}
	return nil
}

// scanSent looks at the Sent folder messages added since the last scan (the
// ledger keeps the last UID per UIDVALIDITY; the first scan, or one after a
// UIDVALIDITY change, looks back DraftWindow plus a day). A message whose
// Message-ID is one of triage's replies is skipped; any other whose thread
// the ledger handled, addressed to that thread's customer (To or Cc; a
// forward to a colleague is not a reply), is a person's reply: it resolves the thread's draft
// (sent as is or edited, by similarity) and goes to OnPersonReply. A hook
// error stops the scan at that message, to be retried next pass.
func (w *Watcher) scanSent(ctx context.Context, c *imapclient.Client) error {
	folder := w.sent
	// The folder was found at connect: failing to open it ends the
	// session, and the next connect says what became of it.
	sel, err := c.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return fmt.Errorf("watch: examine the Sent folder %s: %w", folder, err)
	}
	defer func() {
		if err := c.Unselect().Wait(); err != nil {
			w.log.Debug("imap unselect", "err", err)
		}
	}()
	rs := w.review
	validity, last, err := rs.SentScan(ctx, w.cfg.Account, folder)
	var crit *imap.SearchCriteria
	switch {
	case err != nil && !errors.Is(err, review.ErrNotFound):
		return w.ledgerErr(err)
	case err != nil || validity != sel.UIDValidity:
		last = 0
		crit = &imap.SearchCriteria{Since: w.cfg.Now().Add(-w.cfg.DraftWindow - 24*time.Hour)}
	default:
		crit = &imap.SearchCriteria{UID: []imap.UIDSet{{imap.UIDRange{Start: imap.UID(last + 1), Stop: 0}}}}
	}
	data, err := c.UIDSearch(crit, nil).Wait()
	if err != nil {
		return fmt.Errorf("watch: search %s: %w", folder, err)
	}
	var uids []imap.UID
	for _, u := range data.AllUIDs() {
		if uint32(u) > last { // "UID n:*" includes the highest UID even below n
			uids = append(uids, u)
		}
	}
	slices.Sort(uids)
	if len(uids) > maxSentScan {
		uids = uids[:maxSentScan]
	}
	if len(uids) == 0 {
		return w.ledgerErr(rs.SetSentScan(ctx, w.cfg.Account, folder, sel.UIDValidity, last))
	}

	sec := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, Peek: true,
		HeaderFields: []string{"Message-Id", "In-Reply-To", "References", "From", "Sender", "To", "Cc", "Date"}}
	bufs, err := c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, RFC822Size: true, BodySection: []*imap.FetchItemBodySection{sec}}).Collect()
	if err != nil {
		return fmt.Errorf("watch: fetch %s headers: %w", folder, err)
	}
	slices.SortFunc(bufs, func(a, b *imapclient.FetchMessageBuffer) int { return int(a.UID) - int(b.UID) })
	done := true
	for _, buf := range bufs {
		if err := w.sentMessage(ctx, c, buf.UID, buf.RFC822Size, buf.FindBodySection(sec)); err != nil {
			w.log.Warn("person's reply not settled; retried next pass", "folder", folder, "uid", buf.UID, "err", err)
			done = false
			break
		}
		last = uint32(buf.UID)
	}
	if done {
		last = uint32(uids[len(uids)-1]) // any not fetched were expunged meanwhile
	}
	return w.ledgerErr(rs.SetSentScan(ctx, w.cfg.Account, folder, sel.UIDValidity, last))
}

// sentMessage handles one Sent folder message (its header fields).
func (w *Watcher) sentMessage(ctx context.Context, c *imapclient.Client, uid imap.UID, size int64, hdr []byte) error {
	m, err := message.Parse(hdr)
	if err != nil {
		return nil // not a message we can thread; nothing to do
	}
	l := w.cfg.Ledger
	if m.MessageID != "" {
		r, err := l.Replies().ReplyByMessageID(ctx, m.MessageID)
		switch {
		case err == nil && (r.Kind == replies.KindReply || r.Kind == replies.KindNotice):
			return nil // triage wrote it
		case err == nil && r.Kind == replies.KindDraft && (r.State == replies.ReplySent || r.State == replies.DraftSentByPerson):
			return nil // triage sent its draft on a person's approval (triage console)
		case err == nil && r.Kind == replies.KindPerson:
			return nil // a person's reply from triage console, recorded there
		case err != nil && !errors.Is(err, replies.ErrNotFound):
			return w.ledgerErr(err)
		}
	}
	ids := []string{m.InReplyTo}
	for i := len(m.References) - 1; i >= 0; i-- {
		ids = append(ids, m.References[i])
	}
	th, err := w.review.ThreadOf(ctx, ids, m.To)
	if errors.Is(err, review.ErrNotFound) {
		return nil // not a thread triage handled
	}
	if err != nil {
		return w.ledgerErr(err)
	}
	d, err := l.Replies().GetReply(ctx, th.Key) // our reply or draft in the thread, if any
	replyTo := ""
	if err == nil {
		replyTo = d.To
	}
	if !addressedTo(th, replyTo, m.To) {
		return nil // in the thread, but not to the customer (e.g. forwarded to a colleague)
	}
	pr := PersonReply{MessageID: m.MessageID, InReplyTo: m.InReplyTo, References: m.References,
		From: m.From.Address, FromName: m.From.Name, Date: m.Date, Thread: th}
	if v := m.Header["Sender"]; len(v) > 0 {
		if a, err := mail.ParseAddress(v[0]); err == nil {
			pr.Sender = *a
		}
	}

	if err == nil && d.Kind == replies.KindDraft && d.Outcome == "" {
		pr.DraftOutcome, pr.Similarity = replies.DraftEdited, 0
		if size <= maxPersonReplyBytes {
			raw, _, err := fetchBody(c, uid)
			if err != nil {
				return err
			}
			pr.DraftOutcome, pr.Similarity = review.GradeMessages(d.Raw, raw)
		}
		if _, err := w.review.ResolveDraft(ctx, th.Key, pr.DraftOutcome, pr.Similarity, m.MessageID); err != nil {
			return w.ledgerErr(err)
		}
		w.log.Info("draft resolved by a person's reply", "outcome", pr.DraftOutcome, "similarity", fmt.Sprintf("%.3f", pr.Similarity),
			"scenario", th.Scenario, "draft", d.MessageID, "reply", m.MessageID)
	} else if err != nil && !errors.Is(err, replies.ErrNotFound) {
		return w.ledgerErr(err)
	}
	w.log.Info("a person replied in a handled thread", "thread", th.MessageID, "reply", m.MessageID, "from", m.From.Address)
	if w.cfg.OnPersonReply != nil {
		if err := w.cfg.OnPersonReply(ctx, pr); err != nil {
			return fmt.Errorf("watch: person's reply hook: %w", err)
		}
	}
	return nil
}

// addressedTo reports whether one of to is the thread's customer: the
// inbound sender, or replyTo, the address our reply or draft went to
// (Reply-To; "" when there is none).
func addressedTo(th review.Thread, replyTo string, to []string) bool {
	want := []string{th.Sender, replyTo}
	for _, a := range to {
		for _, w := range want {
			if w != "" && strings.EqualFold(a, w) {
				return true
			}
		}
	}
	return false
}
