package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"unicode/utf8"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	oteltrace "go.opentelemetry.io/otel/trace"

	"triage"
	"triage/internal/clip"
	"triage/internal/ledger"
	"triage/internal/message"
	"triage/internal/processor"
	"triage/internal/replies"
	"triage/internal/trace"
)

// maxLoggedBody bounds the bytes of a message the DEBUG log shows.
const maxLoggedBody = 64 << 10

// peek reads the header of one message; nil when it is gone.
func (w *Watcher) peek(ctx context.Context, c *imapclient.Client, b *box, uid imap.UID) (*peeked, error) {
	loc := ledger.Loc{Account: w.cfg.Account, Mailbox: w.cfg.Mailbox, UIDValidity: b.uidValidity, UID: uint32(uid)}
	hdr, size, internal, ok, err := b.lockedHeader(c, uid, w.cfg.MaxMessageBytes)
	if err != nil {
		return nil, err
	}
	if !ok {
		// Gone (expunged, or moved by someone else or by a run that crashed
		// before recording it): a terminal entry has nothing left to do.
		l := w.cfg.Ledger
		if prev, err := l.Get(ctx, loc); err == nil && prev.State.Terminal() && !prev.IMAPDone {
			return nil, w.ledgerErr(l.MarkIMAPDone(context.WithoutCancel(ctx), loc))
		}
		return nil, nil
	}
	return &peeked{uid: uid, loc: loc, id: identify(hdr), size: size, internal: internal}, nil
}

// handle takes one message to a terminal, settled ledger state. It claims
// the message first (ledger.Claim) and keeps the claim alive while it
// works; ledger.ErrClaimed means another daemon has the message, and
// nothing was done.
func (w *Watcher) handle(ctx context.Context, c *imapclient.Client, b *box, m *peeked) error {
	ctx, span := w.emailTrace(ctx, m.uid, m.id.Key, m.id.MessageID)
	defer span.End()
	claimed, err := w.claim(ctx, m.entry())
	if err != nil {
		return err
	}
	return w.run(ctx, c, b, m, claimed)
}

// emailTrace names the message in every line logged about it, here and in
// the pipeline, and starts its trace: one per message, whose root span's id
// the ledger keeps.
func (w *Watcher) emailTrace(ctx context.Context, uid imap.UID, key triage.Key, messageID string) (context.Context, oteltrace.Span) {
	ctx = trace.WithLogAttrs(ctx, "uid", uint32(uid), "key", key, "message_id", messageID)
	ctx, span, _ := trace.Email(ctx, trace.InboxKey.String(w.cfg.Account+"/"+w.cfg.Mailbox), trace.UIDKey.Int64(int64(uid)),
		trace.KeyKey.String(string(key)))
	return ctx, span
}

// claim claims the message e for this watcher (ledger.Claim) within the
// message's trace; ledger.ErrClaimed when another daemon has it.
func (w *Watcher) claim(ctx context.Context, e ledger.Entry) (ledger.Entry, error) {
	e.TraceID = trace.ID(ctx)
	cctx, cspan := trace.StartClient(ctx, "store claim")
	claimed, err := w.cfg.Ledger.Claim(cctx, e, w.cfg.Owner, w.cfg.Lease)
	if errors.Is(err, ledger.ErrClaimed) {
		trace.End(cspan, nil)
		w.log.DebugContext(ctx, "message claimed by another daemon; leaving it to it", "uid", e.UID)
		return ledger.Entry{}, err
	}
	trace.End(cspan, err)
	return claimed, w.ledgerErr(err)
}

// run takes the message m, claimed by this watcher as claimed, to a
// terminal, settled ledger state.
func (w *Watcher) run(ctx context.Context, c *imapclient.Client, b *box, m *peeked, claimed ledger.Entry) error {
	uid, loc, id, size := m.uid, m.loc, m.id, m.size
	l := w.cfg.Ledger
	e := m.entry()
	e.TraceID = trace.ID(ctx)
	if claimed.State.Terminal() && claimed.IMAPDone {
		return nil // settled meanwhile (by another daemon), and not claimed
	}
	pctx, stop, lost := w.heartbeat(ctx, loc)
	defer stop()
	switch {
	case claimed.State.Terminal():
		return w.settle(ctx, c, b, claimed) // final, but the flag/move did not happen
	}
	e.Attempts = claimed.Attempts

	if other, err := l.TerminalByKey(ctx, id.Key, loc); err == nil {
		return w.handledBefore(ctx, c, b, e, other, size)
	} else if !errors.Is(err, ledger.ErrNotFound) {
		return w.ledgerErr(err)
	}
	if r, err := l.Replies().GetReply(ctx, id.Key); err == nil {
		return w.recover(ctx, c, b, e, r)
	} else if !errors.Is(err, replies.ErrNotFound) {
		return w.ledgerErr(err)
	}

	if reason, err := w.overLimit(ctx, id.From, id.ReplyTo); err != nil {
		return w.ledgerErr(err)
	} else if reason != "" {
		return w.finish(ctx, c, b, e, ledger.StateOverLimit, reason, "", "")
	}
	if size > w.cfg.MaxMessageBytes {
		return w.finish(ctx, c, b, e, ledger.StateFailed, triage.ReasonTooLarge, "", fmt.Sprintf("size=%d max=%d", size, w.cfg.MaxMessageBytes))
	}
	attempt := claimed.Attempts
	if attempt > w.cfg.MaxAttempts {
		return w.finish(ctx, c, b, e, ledger.StateFailed, triage.ReasonTooManyAttempts, "", fmt.Sprintf("attempts=%d", attempt-1))
	}
	_, fspan := trace.StartClient(ctx, "imap fetch", trace.UIDKey.Int64(int64(uid)))
	raw, ok, err := b.lockedBody(c, uid)
	trace.End(fspan, err)
	if err != nil {
		return err
	}
	if !ok {
		return w.ledgerErr(l.Forget(context.WithoutCancel(ctx), loc, w.cfg.Owner))
	}
	if w.log.Enabled(ctx, slog.LevelDebug) {
		// Copied only when it is logged, and a message of megabytes by its
		// first maxLoggedBody bytes.
		head := raw[:min(len(raw), maxLoggedBody+utf8.UTFMax)]
		w.log.DebugContext(ctx, "message body", "uid", uid, "bytes", len(raw), "raw", clip.Bytes(string(head), maxLoggedBody, clip.Ellipsis))
	}
	// Parsed here once for the ledger's digest and the reviewed text; the
	// pipeline parses again with its own bounds.
	text := ""
	if m, err := message.Parse(raw); err == nil {
		e.Digest, text = triage.DigestOf(m), m.Text
	}

	start := w.cfg.Now()
	out := w.process(pctx, processor.Input{Name: loc.String(), Raw: raw, Key: id.Key, Received: m.internal,
		Inbox: triage.Inbox{Account: loc.Account, Mailbox: loc.Mailbox}, MoreAttempts: attempt < w.cfg.MaxAttempts})
	// Kept with the terminal state in one commit (finish), or apart on
	// the ways out that record none.
	e.Kept = w.kept(ctx, out, text)
	w.cfg.Metrics.Observe(processed(out), w.cfg.Now().Sub(start))
	if out.Status == triage.StatusFailed && out.Reason != triage.ReasonSendFailed { // the Sender counted that one
		w.cfg.Metrics.Error("process")
	}

	var reply *replies.Reply
	r, rerr := l.Replies().GetReply(context.WithoutCancel(ctx), id.Key)
	switch {
	case rerr == nil:
		reply = &r
	case !errors.Is(rerr, replies.ErrNotFound):
		w.keepOutcome(ctx, loc, e.Kept)
		return w.ledgerErr(rerr)
	}
	end := ledger.Resolve(ledger.Processed{Status: out.Status, Reason: out.Reason, Escalated: out.Escalated, Stopped: pctx.Err() != nil,
		Retry: sendLater(out, e.Attempts, w.cfg.MaxAttempts)}, reply)
	switch end.Step {
	case ledger.StepStoreDraft:
		if err := w.storeDraft(ctx, c, b, r); err != nil {
			w.keepOutcome(ctx, loc, e.Kept)
			return err
		}
	case ledger.StepMarkUnconfirmed:
		if err := l.Replies().MarkReplyNeedsHuman(context.WithoutCancel(ctx), id.Key); err != nil {
			w.keepOutcome(ctx, loc, e.Kept)
			return w.ledgerErr(err)
		}
	case ledger.StepAbandon:
		// Nothing was sent: leave the message for the next run (or the
		// daemon that took the claim over).
		w.keepOutcome(ctx, loc, e.Kept)
		if lost() {
			return nil
		}
		w.log.InfoContext(ctx, "message abandoned at shutdown; it will be processed again", "uid", uid, "key", id.Key)
		return w.ledgerErr(l.Unclaim(context.WithoutCancel(ctx), loc, w.cfg.Owner))
	case ledger.StepPostpone:
		w.keepOutcome(ctx, loc, e.Kept)
		return w.postponeSend(ctx, e, out)
	}
	state, reason, detail := end.State, end.Reason, out.Detail
	if reply != nil {
		detail = strings.TrimSpace(detail + " reply=" + r.MessageID)
	}
	e.Ticket, e.Clock = out.TicketID, w.clock(m, out, end)
	var file *replies.Reply // the reply to store in the Sent folder
	if end.Sent && w.sent != "" && !w.cfg.NoSaveSent && !r.Appended {
		file = &r
	}
	return w.finishFiling(ctx, c, b, e, state, reason, out.Scenario, detail, file)
}

// recover settles a message whose key already has a reply or a draft,
// written by an earlier attempt (this daemon's, or one that died: this
// watcher holds the claim now, so nobody else works on the key). A reply
// recorded as sent makes the message replied. A pending reply (its sender
// died between recording it and hearing from the mail server) is looked up
// by its Message-ID in the Sent folder: found, it was sent; otherwise a
// person decides. It is never sent again. A draft recorded but perhaps not
// stored is looked up in the Drafts folder and stored when missing.
func (w *Watcher) recover(ctx context.Context, c *imapclient.Client, b *box, e ledger.Entry, r replies.Reply) error {
	l := w.cfg.Ledger
	if r.Kind == replies.KindDraft {
		if r.State == replies.DraftPending {
			stored, err := w.holdsOnServer(ctx, w.drafts, r.MessageID)
			if err != nil {
				w.log.DebugContext(ctx, "could not look the draft up in the Drafts folder; storing it", "folder", w.drafts, "err", err)
			}
			if stored {
				w.log.InfoContext(ctx, "pending draft found in the Drafts folder; recorded as stored", "reply_message_id", r.MessageID)
				err = l.Replies().MarkDraftStored(context.WithoutCancel(ctx), r.Key)
			} else {
				err = w.storeDraft(ctx, c, b, r)
			}
			if err != nil {
				return w.ledgerErr(err)
			}
		}
		return w.finish(ctx, c, b, e, ledger.StateDrafted, triage.ReasonRecovered, "", "draft="+r.MessageID)
	}
	if r.State == replies.ReplyPending {
		sent := false
		if w.sent != "" {
			found, err := w.holdsOnServer(ctx, w.sent, r.MessageID)
			if err != nil {
				w.log.WarnContext(ctx, "could not look the pending reply up in the Sent folder", "folder", w.sent, "err", err)
			}
			sent = found
		}
		var err error
		if sent {
			w.log.InfoContext(ctx, "pending reply found in the Sent folder; recorded as sent", "reply_message_id", r.MessageID)
			err = l.Replies().MarkSent(context.WithoutCancel(ctx), r.Key)
			r.State = replies.ReplySent
		} else {
			w.log.WarnContext(ctx, "pending reply could not be confirmed; left for a person (not sent again)", "reply_message_id", r.MessageID, "to", r.To)
			err = l.Replies().MarkReplyNeedsHuman(context.WithoutCancel(ctx), r.Key)
		}
		if err != nil {
			return w.ledgerErr(err)
		}
	}
	if r.State == replies.ReplySent {
		return w.finish(ctx, c, b, e, ledger.StateReplied, triage.ReasonRecovered, "", "reply="+r.MessageID)
	}
	return w.finish(ctx, c, b, e, ledger.StateNeedsHuman, triage.ReasonReplyUnconfirmed, "", "reply="+r.MessageID)
}

// handledBefore settles a message whose Key another, final entry already
// has. A copy of that message (the same bytes, e.g. after the server
// renumbered its mailbox) is already handled. Another message reusing its
// Message-ID and sender would only get that message's reply again: it is
// never reported answered, but left for a person.
func (w *Watcher) handledBefore(ctx context.Context, c *imapclient.Client, b *box, e, other ledger.Entry, size int64) error {
	detail := "previous=" + other.Loc.String() + " state=" + string(other.State)
	if other.Digest != "" && size <= w.cfg.MaxMessageBytes {
		raw, ok, err := b.lockedBody(c, imap.UID(e.UID))
		if err != nil {
			return err
		}
		if ok && digest(raw) != other.Digest {
			return w.finish(ctx, c, b, e, ledger.StateFailed, triage.ReasonDuplicateKey, "",
				detail+": the same Message-ID and sender, other content; left for a person")
		}
	}
	return w.finish(ctx, c, b, e, ledger.StateSkipped, triage.ReasonAlreadyHandled, "", detail)
}

// digest is triage.DigestOf the message raw holds, as the ledger keeps it
// (ledger.Entry.Digest): "" when it does not parse.
func digest(raw []byte) string {
	m, err := message.Parse(raw)
	if err != nil {
		return ""
	}
	return triage.DigestOf(m)
}

// process runs the pipeline; a panic becomes a failed outcome so that one
// bad message cannot stop the watcher.
func (w *Watcher) process(ctx context.Context, in processor.Input) (out processor.Outcome) {
	defer func() {
		if v := recover(); v != nil {
			w.log.ErrorContext(ctx, "pipeline panicked", "name", in.Name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			out = processor.Outcome{File: in.Name, Status: triage.StatusFailed, Reason: triage.ReasonPanic, Detail: fmt.Sprint(v)}
		}
	}()
	return w.cfg.Processor.Process(ctx, in)
}

func (w *Watcher) ledgerErr(err error) error {
	if err != nil {
		w.cfg.Metrics.Error("ledger")
	}
	return err
}

// overLimit returns the limit reason when a reply to a message from sender,
// answered at replyTo, would exceed a limit. It saves the pipeline a message
// whose reply would be refused; the replies.LedgerSender's check, when the reply is
// written, is the exact one.
func (w *Watcher) overLimit(ctx context.Context, sender, replyTo string) (triage.Reason, error) {
	le, err := w.cfg.Ledger.Replies().Exceeded(ctx, w.cfg.Limits.Replies(), sender, replyTo, w.cfg.Now())
	if err != nil || le == nil {
		return "", err
	}
	return le.Reason, nil
}

// finish records the terminal state, logs the one line per message, and
// settles the message on the server.
func (w *Watcher) finish(ctx context.Context, c *imapclient.Client, b *box, e ledger.Entry, state ledger.State, reason triage.Reason, scenario, detail string) error {
	return w.finishFiling(ctx, c, b, e, state, reason, scenario, detail, nil)
}

// finishFiling is finish that also stores sent (nil: none) in the Sent
// folder as it settles the message (settleFiling).
func (w *Watcher) finishFiling(ctx context.Context, c *imapclient.Client, b *box, e ledger.Entry, state ledger.State, reason triage.Reason, scenario, detail string, sent *replies.Reply) error {
	e.State, e.Reason, e.Scenario, e.Detail = state, reason, scenario, detail
	trace.EmailSpan(ctx).SetAttributes(trace.StateKey.String(string(state)), trace.ReasonKey.String(string(reason)))
	if err := w.cfg.Ledger.Record(context.WithoutCancel(ctx), e); err != nil {
		return w.ledgerErr(err)
	}
	w.mu.Lock()
	w.st.ByState[state]++
	w.mu.Unlock()
	w.cfg.Metrics.Reached(string(state))
	level := slog.LevelInfo
	if state == ledger.StateFailed || state == ledger.StateNeedsHuman || state == ledger.StateOverLimit {
		level = slog.LevelWarn
	}
	w.log.Log(ctx, level, "message", "uid", e.UID, "uidvalidity", e.UIDValidity, "message_id", e.MessageID,
		"from", e.Sender, "state", state, "reason", reason, "scenario", scenario, "attempts", e.Attempts, "detail", detail)
	return w.settleFiling(ctx, c, b, e, sent)
}

// processed is what the metrics count of out.
func processed(out processor.Outcome) trace.Processed {
	return trace.Processed{Status: out.Status, Reason: out.Reason, Scenario: out.Scenario,
		ModelCalls: out.ModelCalls, PromptTokens: out.Tokens.Prompt,
		CachedTokens: out.Tokens.Cached, OutputTokens: out.Tokens.Output + out.Tokens.Thoughts}
}
