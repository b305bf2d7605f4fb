// Reply-loop breaking over the History of replies sent.

package processor

import (
	"context"
	"fmt"
	"time"

	"triage"
	"triage/internal/message"
)

// Loop breaking: a message In-Reply-To one of our replies, from a sender
// already answered LoopReplies times in the last LoopWindow, goes to a person.
const (
	LoopReplies = 2
	LoopWindow  = time.Hour
)

// History is what triage remembers of the replies it sent, for breaking
// reply loops with auto-responders that send no RFC 3834 headers. The watch
// ledger implements it; triage process uses its outbox.
type History interface {
	// SentReply reports whether messageID (with brackets) is the
	// Message-ID of one of our replies.
	SentReply(ctx context.Context, messageID string) (bool, error)
	// RepliesSince counts our replies to addr (or from a message of addr)
	// recorded at or after since.
	RepliesSince(ctx context.Context, addr string, since time.Time) (int, error)
}

// loop reports a reply loop: msg answers one of our replies and its sender
// (From or the reply address) was already answered LoopReplies times within
// LoopWindow. It returns the failure reason and detail, or "".
func (p *Processor) loop(ctx context.Context, msg *message.Message) (reason triage.Reason, detail string) {
	if p.cfg.History == nil {
		return "", ""
	}
	// What the message answers: its In-Reply-To, and the last of its
	// References (clients and autoresponders that omit In-Reply-To still
	// name the message they answer there).
	var ours string
	answers := []string{msg.InReplyTo}
	if n := len(msg.References); n > 0 {
		answers = append(answers, msg.References[n-1])
	}
	for _, id := range answers {
		if id == "" || ours != "" {
			continue
		}
		ok, err := p.cfg.History.SentReply(ctx, id)
		if err != nil {
			return triage.ReasonHistoryError, fmt.Sprintf("reply history: %v; a reply loop cannot be ruled out, left for a person", err)
		}
		if ok {
			ours = id
		}
	}
	if ours == "" {
		return "", ""
	}
	since := p.cfg.Now().Add(-LoopWindow)
	most, who := 0, msg.From.Address
	for _, addr := range []string{msg.From.Address, msg.ReplyTo} {
		if addr == "" {
			continue
		}
		n, err := p.cfg.History.RepliesSince(ctx, addr, since)
		if err != nil {
			return triage.ReasonHistoryError, fmt.Sprintf("reply history: %v; a reply loop cannot be ruled out, left for a person", err)
		}
		if n > most {
			most, who = n, addr
		}
	}
	if most < LoopReplies {
		return "", ""
	}
	return triage.ReasonReplyLoop, fmt.Sprintf("In-Reply-To %s is one of our replies, and %s was already answered %d times in the last %v; a possible auto-reply loop, left for a person",
		ours, who, most, LoopWindow)
}
